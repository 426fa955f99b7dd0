"""Getting the new source out of a Coder reply: a whole KernelBench file, or one kernel that replaces the kernel
of the same name in the current file. Anything else is a `NoCodeError` with a one-line reason."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cudalens.analysis import python_ast

_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?[\w:<>,\s*&]*?\b(\w+)\s*\(")
_PY_LANGS = {"python", "py", "python3", ""}


class NoCodeError(ValueError):
    pass


@dataclass(frozen=True)
class Extracted:
    source: str  # the complete new file
    kind: Literal["file", "kernel"]
    kernel: str | None = None  # the kernel replaced, for kind == "kernel"


@dataclass(frozen=True)
class _Block:
    language: str
    text: str
    start: int = 0  # where the block, its fences included, begins and ends in the reply
    end: int = 0


def code_blocks(reply: str) -> list[_Block]:
    """Fenced blocks in order; an unterminated last fence (a truncated reply) still counts."""
    return [_Block(m.group(2).lower(), m.group(3), m.start(), m.end()) for m in _FENCE.finditer(reply)]


def explanation_around(reply: str, block: _Block) -> str:
    """The reply's words without `block`: the prose before it and the prose after it, a blank line between."""
    return "\n\n".join(part for part in (reply[: block.start].strip(), reply[block.end :].strip()) if part)


def _is_model_file(text: str) -> bool:
    if "class ModelNew" not in text:
        return False
    try:
        python_ast.parse(text)
    except SyntaxError:
        return False
    return True


def _kernel_names(text: str) -> list[str]:
    return _KERNEL.findall(text)


def _definition_span(text: str, name: str) -> tuple[int, int] | None:
    """Start/end offsets of `__global__ ... name(...) { ... }` in text (template line included)."""
    for m in _KERNEL.finditer(text):
        if m.group(1) != name:
            continue
        start = m.start()
        template = re.search(r"template\s*<[^{};]*>\s*$", text[:start])
        if template:
            start = template.start()
        brace = text.find("{", m.end())
        if brace < 0:
            return None
        depth, i = 0, brace
        while i < len(text):
            ch = text[i]
            if text.startswith("//", i):
                i = text.find("\n", i)
                i = len(text) if i < 0 else i
                continue
            if text.startswith("/*", i):
                i = text.find("*/", i)
                i = len(text) if i < 0 else i + 2
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return start, i + 1
            i += 1
        return None
    return None


def extract_source(reply: str, current: str | None, kernel: str | None = None) -> Extracted:
    """The complete new file from a reply. `current` is the file being improved (for single-kernel replies)."""
    blocks = code_blocks(reply)
    if not blocks and reply.strip():
        blocks = [_Block("", reply)]  # an unfenced reply may be the file itself
    files = [b for b in blocks if b.language in _PY_LANGS and _is_model_file(b.text)]
    if files:
        # several complete files: the last is the model's final answer, unless it only sketches a part
        best = max(
            reversed(files),
            key=lambda b: ("__global__" in b.text, len(b.text) > 0.5 * max(len(f.text) for f in files)),
        )
        return Extracted(best.text.strip("\n") + "\n", "file")
    kernels = [b for b in blocks if _kernel_names(b.text)]
    if kernels and current is not None:
        targets = _kernel_names(current)
        for block in reversed(kernels):
            names = _kernel_names(block.text)
            name = kernel if kernel in names else next((n for n in names if n in targets), None)
            if name is None:
                continue
            new_span, old_span = _definition_span(block.text, name), _definition_span(current, name)
            if new_span is None or old_span is None:
                continue
            new_def = block.text[new_span[0] : new_span[1]]
            return Extracted(current[: old_span[0]] + new_def + current[old_span[1] :], "kernel", name)
        raise NoCodeError(
            f"the reply has CUDA code for {', '.join(sorted({n for b in kernels for n in _kernel_names(b.text)}))} "
            f"but the file defines {', '.join(targets) or 'no kernel'}: nothing to replace"
        )
    if (
        blocks
        and any(b.text.strip() for b in blocks)
        and any(b.language in _PY_LANGS for b in blocks)
        and any("class ModelNew" in b.text for b in blocks)
    ):
        raise NoCodeError("the reply's Python code does not parse")
    snippet = " ".join(reply.split())[:80]
    raise NoCodeError(
        f"the reply contains no ModelNew file and no kernel: “{snippet}”" if snippet else "the reply is empty"
    )
