"""CUDA embedded in Python: `load_inline(cuda_sources=..., cpp_sources=...)` (literal or module-level variable),
KernelBench `ModelNew` files, CuPy `RawKernel`/`RawModule` strings, and any other string holding a `__global__`.

Each `EmbeddedSource` keeps, for every character of the decoded CUDA text, where it stands in the `.py` file, so
findings land on the Python lines the user sees (escape sequences and implicit concatenation included).
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Literal

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.file_kinds import may_contain_cuda
from cudalens.analysis.positions import LineIndex, parser_text

_SOURCE_CALLS = {"load_inline": "load_inline", "RawKernel": "RawKernel", "RawModule": "RawModule",
                 "ElementwiseKernel": "RawKernel", "ReductionKernel": "RawKernel"}
_ESCAPE = re.compile(r"\\(N\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|\n|.)", re.S)


@dataclass(frozen=True)
class EmbeddedSource:
    kind: Literal["cuda", "cpp"]
    origin: str  # load_inline | RawKernel | RawModule | string
    name: str | None  # the variable that holds it, when it is one
    text: str
    # (line, column), 1-based in the .py file, of each character of `text`, plus one past the end
    positions: tuple[tuple[int, int], ...] = field(repr=False)
    line_starts: tuple[int, ...] = field(repr=False)

    @property
    def start_line(self) -> int:
        return self.positions[0][0]

    def to_file_position(self, line: int, column: int) -> tuple[int, int]:
        """Map a 1-based (line, column) of `text` to the 1-based (line, column) in the Python file."""
        line = min(max(line, 1), len(self.line_starts))
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        index = min(start + max(column, 1) - 1, end)
        return self.positions[index]


def _decode(node: ts.Node, index: LineIndex) -> tuple[str, list[tuple[int, int]]] | None:
    """The value of a Python string node and the file position of each of its characters."""
    if node.type == "concatenated_string":
        parts = [_decode(child, index) for child in node.named_children if child.type == "string"]
        if any(p is None for p in parts):
            return None
        # each part's positions end with its one-past-the-end entry: keep only the last part's
        positions = [pos for p in parts for pos in p[1][:-1]] + [parts[-1][1][-1]] if parts else []
        return "".join(p[0] for p in parts), positions
    start = next((c for c in node.children if c.type == "string_start"), None)
    if start is None:
        return None
    prefix = ts.text(start).lower()
    if "f" in prefix or "b" in prefix:
        return None
    raw = "r" in prefix
    chars: list[str] = []
    positions: list[tuple[int, int]] = []
    line, col = index.to_char(start.end_point)
    for content in node.children:
        if content.type != "string_content":
            continue
        body = ts.text(content)
        line, col = index.to_char(content.start_point)
        i = 0
        while i < len(body):
            m = None if raw else _ESCAPE.match(body, i) if body[i] == "\\" else None
            if m:
                literal = m.group(0)
                value = "" if literal == "\\\n" else codecs.decode(literal, "unicode_escape")
                for ch in value:
                    chars.append(ch)
                    positions.append((line, col))
                for ch in literal:
                    line, col = (line + 1, 1) if ch == "\n" else (line, col + 1)
                i = m.end()
                continue
            ch = body[i]
            chars.append(ch)
            positions.append((line, col))
            line, col = (line + 1, 1) if ch == "\n" else (line, col + 1)
            i += 1
    positions.append((line, col))
    return "".join(chars), positions


def _make(kind: str, origin: str, name: str | None, decoded: tuple[str, list]) -> EmbeddedSource:
    text, positions = decoded
    text = parser_text(text)  # a `\r` escape ends a line too (the same length: positions stay)
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    return EmbeddedSource(kind, origin, name, text, tuple(positions), tuple(starts))  # type: ignore[arg-type]


def _callee_name(func: ts.Node) -> str:
    if func.type == "attribute":
        attr = func.child_by_field_name("attribute")
        return ts.text(attr) if attr is not None else ""
    return ts.text(func)


def extract_cuda_sources(py_text: str) -> list[EmbeddedSource]:
    """Every CUDA (and load_inline C++) source in a Python file, in file order, each once."""
    if not may_contain_cuda(py_text):
        return []
    py_text = parser_text(py_text)
    data = py_text.encode("utf-8", errors="surrogatepass")
    tree = ts.parse_python(data)
    index = LineIndex(py_text)
    found = ts.matches("python", "python_cuda_strings", tree.root_node)
    variables: dict[str, ts.Node] = {}
    for _, caps in found:
        if "var" in caps:
            variables[ts.text(caps["var"][0])] = caps["value"][0]

    chosen: dict[int, tuple[str, str, str | None, ts.Node]] = {}  # start byte -> (kind, origin, name, node)

    def take(kind: str, origin: str, value: ts.Node) -> None:
        if value.type in ("list", "tuple"):
            for item in value.named_children:
                take(kind, origin, item)
            return
        name = None
        if value.type == "identifier":
            name = ts.text(value)
            value = variables.get(name)  # type: ignore[assignment]
            if value is None:
                return
        if value.type in ("string", "concatenated_string"):
            chosen.setdefault(value.start_byte, (kind, origin, name, value))

    for _, caps in found:
        if "call" not in caps:
            continue
        origin = _SOURCE_CALLS.get(_callee_name(caps["func"][0]))
        if origin is None:
            continue
        args = caps["args"][0]
        positional = [a for a in args.named_children if a.type != "keyword_argument"]
        for arg in args.named_children:
            if arg.type == "keyword_argument":
                key = ts.text(arg.child_by_field_name("name"))
                value = arg.child_by_field_name("value")
                if key == "cuda_sources" or (origin != "load_inline" and key == "code"):
                    take("cuda", origin, value)
                elif key == "cpp_sources":
                    take("cpp", origin, value)
        if origin != "load_inline" and positional:
            take("cuda", origin, positional[0])

    # Any other module-level or literal string that holds a kernel (sources built before the call).
    for name, value in variables.items():
        if value.start_byte not in chosen and "__global__" in ts.text(value):
            chosen[value.start_byte] = ("cuda", "string", name, value)

    sources = []
    for _, (kind, origin, name, node) in sorted(chosen.items()):
        decoded = _decode(node, index)
        if decoded is not None and decoded[0].strip():
            sources.append(_make(kind, origin, name, decoded))
    return sources


def line_of(sources: list[EmbeddedSource], py_line: int) -> EmbeddedSource | None:
    """The embedded source that covers a line of the Python file, if any."""
    starts = [s.start_line for s in sources]
    i = bisect_right(starts, py_line) - 1
    if i >= 0 and sources[i].positions[-1][0] >= py_line:
        return sources[i]
    return None
