"""`cudalens check --compile/--test`: the profiler's findings for a file, beside the static ones.

The profiler owns compiling and testing (profiler/compile_findings.py: CL8xx, profiler/run_findings.py: CL9xx);
it is imported only when a flag asks for it, so a plain `cudalens check` never loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.findings import Finding

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
        from cudalens.profiler.compile_findings import compile_findings

        hooks.append(compile_findings)
    if test:
        from cudalens.profiler.run_findings import test_findings

        hooks.append(test_findings)
    return ProfilerHooks(tuple(hooks))
