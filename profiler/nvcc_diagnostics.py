"""nvcc's error and warning output → `CompilerMessage`s with a file, a line and a column range.

nvcc speaks three dialects: the CUDA front end (`file(12): error: ...`, then the offending line as it was
*after preprocessing* and a caret), the host preprocessor and compiler (gcc's `file:12:5: error: ...`), and
ptxas/nvcc themselves (`ptxas error   : ...`, `nvcc fatal   : ...`, no position). The front end's caret points into
the preprocessed line (`__global__` is spelled `__attribute__((global))` there), so the column is found again in
the original line by the token under the caret.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

MessageSeverity = Literal["error", "warning", "remark"]

_FRONT_END = re.compile(
    r"^(?P<path>.+?)\((?P<line>\d+)\): (?P<sev>error|warning|remark|catastrophic error)"
    r"(?: #(?P<code>[\w-]+))?: (?P<msg>.*)$"
)
_GCC = re.compile(
    r"^(?P<path>[^:\s][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>fatal error|error|warning|note): (?P<msg>.*)$"
)
_TOOL = re.compile(r"^(?P<tool>ptxas|nvcc|nvlink|fatbinary|cicc)\s+(?P<sev>fatal|error|warning)\s*: (?P<msg>.*)$")
_INSTANTIATION = re.compile(r"^\s+detected during")
_TOKEN = re.compile(r"\w+|\S")
# ptxas names the kernel by its mangled name; the caller can place the message on that kernel.
_MANGLED = re.compile(r"'(_Z\w+)'")


@dataclass(frozen=True)
class CompilerMessage:
    path: str | None  # None: no position (ptxas, nvcc fatal); the caller places it
    line: int  # 1-based; 0 when path is None
    column: int  # 1-based
    end_column: int  # exclusive; == column when only the line is known
    severity: MessageSeverity
    message: str
    code: str | None = None  # the front end's diagnostic number, e.g. "177-D"
    tool: str = "nvcc"  # nvcc (front end) | host | ptxas | nvlink ...
    symbol: str | None = None  # a mangled kernel name the message is about

    def moved(self, path: str, line: int, column: int, end_column: int) -> CompilerMessage:
        return replace(self, path=path, line=line, column=column, end_column=end_column)


def _severity(word: str) -> MessageSeverity:
    if "error" in word or word == "fatal":
        return "error"
    if word in ("warning",):
        return "warning"
    return "remark"


def _column_in_original(echoed: str, caret: int, original: str | None) -> tuple[int, int] | None:
    """(column, end column), 1-based, in the original line of the token the caret points at in `echoed`."""
    if original is None or caret >= len(echoed):
        return None
    match = _TOKEN.match(echoed, caret)
    if match is None:
        return None
    token = match.group(0)
    echoed_body = echoed[2:] if echoed.startswith("  ") else echoed  # the front end indents by two
    offset = caret - (len(echoed) - len(echoed_body))
    if echoed_body == original:
        return offset + 1, offset + 1 + len(token)
    # The n-th occurrence of the token before the caret in the echo is the n-th in the original too,
    # unless a macro expansion introduced it; then only the line is known.
    nth = sum(1 for m in re.finditer(re.escape(token), echoed[:caret]) if _whole(echoed, m, token))
    hits = [m.start() for m in re.finditer(re.escape(token), original) if _whole(original, m, token)]
    if nth < len(hits):
        return hits[nth] + 1, hits[nth] + 1 + len(token)
    return None


def _whole(text: str, m: re.Match[str], token: str) -> bool:
    if not token[0].isalnum() and token[0] != "_":
        return True
    before = text[m.start() - 1] if m.start() > 0 else " "
    after = text[m.end()] if m.end() < len(text) else " "
    return not (before.isalnum() or before == "_" or after.isalnum() or after == "_")


def _line_span(original: str | None) -> tuple[int, int]:
    if not original:
        return 1, 1
    stripped = original.lstrip()
    return len(original) - len(stripped) + 1, len(original.rstrip()) + 1


def parse_nvcc_output(output: str, source_line: Callable[[str, int], str | None]) -> list[CompilerMessage]:
    """Every error, warning and remark in nvcc's combined output, in order.

    `source_line(path, line)` returns the text of a line of a file as nvcc named it (None if unknown); it is
    used to place the column.
    """
    lines = output.splitlines()
    found: list[CompilerMessage] = []
    i = 0
    while i < len(lines):
        text = lines[i]
        m = _FRONT_END.match(text)
        if m:
            path, line = m.group("path"), int(m.group("line"))
            message = m.group("msg")
            original = source_line(path, line)
            column, end = _line_span(original)
            j = i + 1
            # The echo and the caret follow, then "detected during instantiation" notes, then a blank line.
            if j + 1 < len(lines) and lines[j + 1].strip() == "^":
                placed = _column_in_original(lines[j], lines[j + 1].index("^"), original)
                if placed:
                    column, end = placed
                j += 2
            while j < len(lines) and _INSTANTIATION.match(lines[j]):
                message += " (" + lines[j].strip() + ")"
                j += 1
            found.append(
                CompilerMessage(path, line, column, end, _severity(m.group("sev")), message, m.group("code"))
            )
            i = j
            continue
        m = _GCC.match(text)
        if m and m.group("sev") != "note":
            path, line = m.group("path"), int(m.group("line"))
            original = source_line(path, line)
            column, end = _line_span(original)
            if m.group("col"):
                column = int(m.group("col"))
                rest = (original or "")[column - 1 :]
                token = _TOKEN.match(rest)
                end = column + (len(token.group(0)) if token else 1)
            found.append(CompilerMessage(path, line, column, end, _severity(m.group("sev")), m.group("msg"), tool="host"))
            i += 1
            continue
        m = _TOOL.match(text)
        if m:
            symbol = _MANGLED.search(m.group("msg"))
            found.append(
                CompilerMessage(
                    None,
                    0,
                    1,
                    1,
                    _severity(m.group("sev")),
                    f"{m.group('tool')}: {m.group('msg')}",
                    tool=m.group("tool"),
                    symbol=symbol.group(1) if symbol else None,
                )
            )
        i += 1
    return found
