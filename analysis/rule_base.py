"""What every rule is: a code, a name, documentation in ruff's form, and checks: `check` over one kernel's
model (cached per kernel between edits) and `check_unit` over the whole translation unit, for what is not one
kernel's (launch sites, host code); file-level checks run on every update, so they must stay cheap.

Rules that the analyzer does not run itself (compiler results CL8xx, run-time results CL9xx) are documented
the same way so that `cudalens rule CL801` works for every code a user can see.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cudalens.analysis.assumptions import ALL_FACTS, Fact
from cudalens.analysis.findings import Finding, Severity, Span

if TYPE_CHECKING:
    from cudalens.analysis.file_context import FileContext
    from cudalens.analysis.model import KernelModel

DOC_HEADINGS = (
    "What it does",
    "Why is this bad?",
    "Known problems",
    "Example",
    "Use instead",
    "Fix safety",
    "References",
)


class Rule:
    """Base class. Subclasses set the class attributes and, for static rules, implement `check` and/or
    `check_unit`."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    summary: ClassVar[str]  # one line, for `cudalens rules`
    default_severity: ClassVar[Severity] = Severity.WARNING
    fixable: ClassVar[bool] = False
    since: ClassVar[str] = "0.1.0"
    status: ClassVar[str] = "stable"  # stable | preview | removed
    source: ClassVar[str] = "static"  # static | input (a file not analysed) | compiler | runtime | judge
    # What the rule's conclusions can rest on, of what a kernel's analysis may have had to assume (its block,
    # template arguments, sizes): a finding resting on an assumption is demoted to info (assumptions.py).
    # Every static rule states it; a rule that reads only the text (a double literal) depends on nothing.
    depends_on: ClassVar[frozenset[Fact]] = ALL_FACTS

    def check(self, kernel: KernelModel) -> Iterable[Finding]:
        return ()

    def check_unit(self, unit: FileContext) -> Iterable[Finding]:
        return ()

    @classmethod
    def finding(cls, path: str, message: str, span: Span, severity: Severity | None = None, **more) -> Finding:
        """A finding of this rule: its code and name from here, so nothing outside spells them again."""
        return Finding(path, cls.code, cls.name, severity or cls.default_severity, message, span, **more)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    severity: Severity
    fixable: bool
    since: str
    status: str
    source: str
    doc: str

    @classmethod
    def of(cls, rule: type[Rule]) -> RuleInfo:
        return cls(
            rule.code,
            rule.name,
            rule.summary,
            rule.default_severity,
            rule.fixable,
            rule.since,
            rule.status,
            rule.source,
            rule.documentation(),
        )
