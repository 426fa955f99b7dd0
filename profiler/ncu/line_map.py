"""Maps source lines that tools report (a `.cu` as nvcc saw it, or load_inline's generated `cuda.cu` in a
build folder) back to lines of the user's file (the `.cu`, or the `.py` that embeds the CUDA)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cudalens.analysis.findings import Span
from cudalens.worker.child.results import LineCounters

_CONTEXT = 2  # lines either side that must match for a line of a generated file to map
_SUMMED = (
    "inst_executed", "thread_inst_executed", "global_requests", "global_sectors", "global_sectors_ideal",
    "shared_wavefronts", "shared_wavefronts_ideal", "divergent_branches", "stall_samples",
)


def _norm(line: str) -> str:
    return " ".join(line.split())


class LineMapper:
    """A reported (file, line) → the user's line, or None when it is not the user's code.

    The user's own file keeps its numbers. Another file (a generated copy) maps by content: the reported
    line with its neighbours must occur exactly once in the user's text. `files` holds texts the tool
    embedded (ncu's imported sources); otherwise the reported file is read from disk when it still exists.
    """

    def __init__(self, user_path: str, user_text: str, files: dict[str, str] | None = None) -> None:
        self.user_real = _real(user_path)
        self.user_name = Path(user_path).name
        self.user_lines = [_norm(x) for x in user_text.splitlines()]
        self.files = dict(files or {})
        self._tables: dict[str, dict[int, int] | None] = {}

    def map(self, file: str | None, line: int, source: str = "") -> int | None:
        if not file or _real(file) == self.user_real:
            return line if line > 0 else None
        if file not in self._tables:
            content = self.files.get(file) or _read(file)
            self._tables[file] = _align(content.splitlines(), self.user_lines) if content else None
        table = self._tables[file]
        if table is None:  # gone or unreadable: a file of the user's name is the user's, seen from elsewhere
            return line if Path(file).name == self.user_name else _unique_text_match(source, self.user_lines)
        return table.get(line) or _unique_text_match(source, self.user_lines)


def map_lines(
    lines: list[LineCounters], user_path: str, user_text: str, files: dict[str, str] | None = None
) -> list[LineCounters]:
    """The counters that belong to the user's file, renumbered to it and merged per line."""
    mapper = LineMapper(user_path, user_text, files)
    mapped: dict[int, LineCounters] = {}
    for counters in lines:
        target = mapper.map(counters.file, counters.line, counters.source)
        if not target:
            continue
        moved = replace(counters, file=user_path, line=target)
        mapped[target] = _merge(mapped[target], moved) if target in mapped else moved
    return [mapped[k] for k in sorted(mapped)]


def _align(reported: list[str], user: list[str]) -> dict[int, int]:
    norm = [_norm(x) for x in reported]
    index: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(user)):
        index.setdefault(tuple(user[max(0, i - _CONTEXT) : i + _CONTEXT + 1]), []).append(i)
    out: dict[int, int] = {}
    for i in range(len(norm)):
        if not norm[i]:
            continue
        hits = index.get(tuple(norm[max(0, i - _CONTEXT) : i + _CONTEXT + 1]), [])
        if len(hits) == 1:
            out[i + 1] = hits[0] + 1
    return out


def _unique_text_match(source: str, user: list[str]) -> int | None:
    text = _norm(source)
    if len(text) < 8:  # `}` or `x++;` says nothing about where it is
        return None
    hits = [i for i, line in enumerate(user) if line == text]
    return hits[0] + 1 if len(hits) == 1 else None


def _merge(a: LineCounters, b: LineCounters) -> LineCounters:
    summed = {name: getattr(a, name) + getattr(b, name) for name in _SUMMED}
    kernel = a.kernel if a.kernel == b.kernel else ", ".join(sorted({a.kernel, b.kernel} - {""}))
    return replace(a, kernel=kernel, **summed)


def _real(path: str) -> str:
    try:
        return str(Path(path).resolve()) if path else ""
    except OSError:
        return path


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def line_span(source: list[str], line: int) -> Span:
    """The span of a line's text without its indentation (1-based, end exclusive)."""
    text = source[line - 1] if 0 < line <= len(source) else ""
    start = len(text) - len(text.lstrip()) + 1
    return Span(line, start, line, max(len(text.rstrip()) + 1, start))
