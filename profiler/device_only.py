"""Blank out the PyTorch host code of a CUDA source so its kernels compile in a second, not fifteen.

A `load_inline` source or a torch-extension `.cu` file pairs kernels with host wrappers that use
`torch::Tensor`; compiling those needs the torch headers (≈ 15 s of front end per build). The compiler messages
about the kernels and ptxas's resource usage need none of it. `device_only` replaces every top-level item
(function, declaration, class, `PYBIND11_MODULE` block, `#include` of a torch header) that mentions torch and is
not device code with spaces, keeping every newline, so line and column numbers of what is left are unchanged.

When device code itself uses torch (`c10::Half` in a kernel), the stripped text still needs the headers; the
caller then compiles the whole source with them (`needs_torch`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cudalens.worker.child.cpp_source import (
    TORCH_MARKERS,
    closing_bracket,
    directive_end,
    skip_comment_or_literal,
)

_TORCH_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](?:torch|ATen|c10|pybind11|Python\.h)")
_DEVICE = re.compile(r"\b(?:__global__|__device__)\b")
_SCOPE_HEAD = re.compile(r"^\s*(?:(?:inline\s+)?namespace\b[\w\s:]*|extern\s*\"C(?:\+\+)?\"\s*)$")
_NOT_CODE = re.compile(r"^[ \t]*#[^\n]*(?:\\\n[^\n]*)*|//[^\n]*|/\*.*?\*/", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class DeviceOnly:
    text: str  # same length and lines as the input
    stripped: bool  # something was blanked
    needs_torch: bool  # what is left still uses torch


def _at_line_start(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    return j < 0 or text[j] == "\n"


def device_only(text: str) -> DeviceOnly:
    chars = list(text)
    blanked = False

    def blank(start: int, end: int) -> None:
        nonlocal blanked
        for k in range(start, min(end, len(chars))):
            if chars[k] != "\n":
                chars[k] = " "
        blanked = True

    def consider(start: int, end: int) -> None:
        item = text[start:end]
        if TORCH_MARKERS.search(item) and not _DEVICE.search(item):
            blank(start, end)

    def scope(i: int) -> int:
        """Walk the items of one scope from i; returns the index of the scope's closing brace (or the end)."""
        item_start = i
        while i < len(text):
            j = skip_comment_or_literal(text, i)
            if j != i:
                i = j
                continue
            ch = text[i]
            if ch == "#" and _at_line_start(text, i):
                end = directive_end(text, i)
                if _TORCH_INCLUDE.match(text[i:end]):
                    blank(i, end)
                i = item_start = end
            elif ch == ";":
                consider(item_start, i + 1)
                i = item_start = i + 1
            elif ch == "{":
                if _SCOPE_HEAD.match(text[item_start:i]):
                    i = item_start = scope(i + 1) + 1
                    continue
                close = closing_bracket(text, i)
                after = close + 1
                while after < len(text) and text[after] in " \t":
                    after += 1
                if after < len(text) and text[after] == ";":  # struct X { ... };
                    close = after
                consider(item_start, close + 1)
                i = item_start = close + 1
            elif ch == "}":
                return i
            else:
                i += 1
        return len(text)

    scope(0)
    result = "".join(chars)
    code = _NOT_CODE.sub("", result)  # a macro or a comment that mentions torch needs no headers
    return DeviceOnly(result, blanked, bool(TORCH_MARKERS.search(code)))
