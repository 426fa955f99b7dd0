"""Whether a text still parses after an edit: the check every edit cudalens offers passes before it is offered.

A `.cu`/`.cuh` file is read by tree-sitter-cuda; a `.py` file by Python's `ast`, and the CUDA in its strings by
tree-sitter-cuda. An edit may not add syntax errors; a text that already had some may keep them (a half-typed
file still gets its fixes, and the Suppress action on a line of it).
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import cached_property

from cudalens.analysis import python_ast
from cudalens.analysis import ts_binding as ts
from cudalens.analysis.embedded import extract_cuda_sources
from cudalens.analysis.incremental import reparse
from cudalens.analysis.positions import parser_text
from cudalens.analysis.unit import build_unit


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogatepass")


def _python_errors(text: str) -> int:
    with warnings.catch_warnings():  # an invalid escape in a string is a SyntaxWarning on stderr, not an error
        warnings.simplefilter("ignore")
        try:
            python_ast.parse(text)
            errors = 0
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a NUL byte (3.11)
            errors = 1
    return errors + sum(ts.error_count(ts.parse_cuda(_encode(s.text))) for s in extract_cuda_sources(text))


class SyntaxBaseline:
    """The syntax errors of one text (counted on first use); edited copies of it are re-parsed incrementally
    from its tree."""

    def __init__(self, text: str, path: str, tree: ts.Tree | None = None) -> None:
        """`tree`: the parse of `parser_text(text)` when the caller has it (DocumentAnalyzer does). The server
        makes one for every version and uses few (an offered edit): nothing is read until then."""
        self.python = path.endswith(".py")
        self._raw = text
        self._tree = tree

    @cached_property
    def _text(self) -> str:
        return parser_text(self._raw)

    @cached_property
    def _source(self) -> bytes:
        return b"" if self.python else _encode(self._text)

    @cached_property
    def errors(self) -> int:
        if self.python:
            return _python_errors(self._text)
        if self._tree is None:
            self._tree = ts.parse_cuda(self._source)
        return ts.error_count(self._tree)

    def errors_in(self, edited: str) -> int:
        edited = parser_text(edited)
        if self.python:
            return _python_errors(edited)
        self.errors  # noqa: B018 - parses the text itself when no tree was given
        return ts.error_count(reparse(self._source, self._tree.copy(), _encode(edited)))

    def accepts(self, edited: str) -> bool:
        """True when `edited` has no more syntax errors than the text this baseline was made from."""
        return self.errors_in(edited) <= self.errors


_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*([<\"][^>\"\n]*[>\"])", re.M)


def top_level_names(text: str, path: str) -> dict[str, int]:
    """What a text defines at its top level, with the 1-based line of each: for Python its classes, functions,
    assigned names and imports (nothing when it does not parse); for CUDA its functions and `#include`s. Tells
    a reply that is a whole file from one that is a part of it."""
    text = parser_text(text)
    if path.endswith(".py"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                module = python_ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return {}
        names: dict[str, int] = {}
        for node in module.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                names.setdefault(node.name, node.lineno)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names.setdefault(f"import {alias.asname or alias.name}", node.lineno)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        names.setdefault(target.id, node.lineno)
        return names
    names = {f"#include {m.group(1)}": text.count("\n", 0, m.start()) + 1 for m in _INCLUDE.finditer(text)}
    for name, functions in build_unit(_encode(text)).functions.items():
        names.setdefault(name, functions[0].node.start_point[0] + 1)
    return names
