"""`cudalens check --compile/--test`: the profiler's findings for a file, beside the static ones.

The profiler owns compiling and testing (profiler/compile_findings.py: CL8xx, profiler/run_findings.py: CL9xx);
it is imported only when a flag asks for it, so a plain `cudalens check` never loads it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.findings import Finding
from cudalens.cli.escape import printable

HookFn = Callable[[str, str, AnalysisConfig], "list[Finding]"]


@dataclass(frozen=True)
class ProfilerHooks:
    hooks: tuple[HookFn, ...]  # one for each requested check, in the order compile, test

    def findings(self, path: str, text: str, config: AnalysisConfig) -> list[Finding]:
        found: list[Finding] = []
        for hook in self.hooks:
            found.extend(hook(path, text, config))
        return found


def load_hooks(compile: bool, test: bool) -> ProfilerHooks:
    hooks: list[HookFn] = []
    if compile:
        hooks.append(_compiled)
    if test:
        from cudalens.profiler.run_findings import test_findings

        hooks.append(test_findings)
    return ProfilerHooks(tuple(hooks))


_SAID: set[str] = set()


def _compiled(path: str, text: str, config: AnalysisConfig) -> list[Finding]:
    """`--compile`'s findings, and when nothing was compiled, why (once each reason: no nvcc, a header from
    outside the workspace), as the editor says it: never a clean result that hides that nothing ran."""
    from cudalens.profiler.compile_findings import compile_report

    report = compile_report(path, text, config)
    if report.skipped and report.skipped not in _SAID:
        _SAID.add(report.skipped)
        print(printable(f"cudalens: warning: {path}: nothing was compiled: {report.skipped}"), file=sys.stderr)
    return report.findings
