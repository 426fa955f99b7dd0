"""The Finding: what every check of cudalens reports, static or from the GPU.

Plain frozen dataclasses: only `cudalens.server` turns them into LSP types, only `cudalens.cli` into output
formats. Positions are 1-based lines and columns (columns count characters of the line), end exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Literal


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.HINT: 0, Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}


@dataclass(frozen=True, order=True)
class Span:
    """A range in a file: 1-based line and column of the start, and of the end (exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class TextEdit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A change that resolves a finding. `safe` fixes keep the program's meaning and may be applied in bulk."""

    message: str
    edits: tuple[TextEdit, ...]
    applicability: Literal["safe", "unsafe"] = "safe"

    @property
    def is_safe(self) -> bool:
        return self.applicability == "safe"


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (the shared array behind a bank conflict, the launch site...)."""

    span: Span
    message: str
    path: str | None = None  # None: the finding's own file


Evidence = float | int | str | tuple[tuple[str, int | str], ...]  # pairs stay hashable (diagnostic caches)


@dataclass(frozen=True)
class Finding:
    path: str
    code: str  # CL + 3 digits, see cudalens.analysis.codes
    rule: str  # kebab-case name
    severity: Severity
    message: str
    span: Span
    kernel: str | None = None
    fix: Fix | None = None
    # numbers that justify it; `assumed` (what the analysis had to assume, by name) is itself name/value pairs
    evidence: tuple[tuple[str, Evidence], ...] = ()
    related: tuple[Related, ...] = ()
    tags: tuple[Literal["unnecessary", "deprecated"], ...] = ()

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def with_path(self, path: str) -> Finding:
        return replace(self, path=path)

    def evidence_dict(self) -> dict:
        """The evidence as JSON-ready values (nested pairs, such as `assumed`, become objects)."""
        return {k: dict(v) if isinstance(v, tuple) else v for k, v in self.evidence}

    def to_json(self) -> dict:
        """The `cudalens check --format json` shape of one finding (version 1)."""
        return {
            "path": self.path,
            "code": self.code,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "kernel": self.kernel,
            "fix": None
            if self.fix is None
            else {
                "message": self.fix.message,
                "applicability": self.fix.applicability,
                "edits": [
                    {
                        "line": e.span.line,
                        "column": e.span.column,
                        "end_line": e.span.end_line,
                        "end_column": e.span.end_column,
                        "content": e.new_text,
                    }
                    for e in self.fix.edits
                ],
            },
            "evidence": self.evidence_dict(),
            "related": [
                {"path": r.path or self.path, "line": r.span.line, "column": r.span.column, "message": r.message}
                for r in self.related
            ],
        }


def sort_key(f: Finding) -> tuple:
    # a total order: two findings may start at one place (`a/b*c/d` holds two divisions), and `cudalens check`
    # gathers a directory's from its worker processes in whatever order they finish
    return (f.path, f.span.line, f.span.column, f.code, f.span.end_line, f.span.end_column, f.message)

