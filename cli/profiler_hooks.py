"""The glue between `cudalens check --compile/--test` and the profiler, which owns compiling and testing.

The profiler exposes `cudalens.profiler.cli_hooks.compile_findings(path, text, config)` and
`test_findings(path, text, config)`, each returning findings (CL8xx, CL9xx). When a build lacks that module,
the flags are accepted and say once that they are not available yet.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.findings import Finding

HOOKS_MODULE = "cudalens.profiler.cli_hooks"
HookFn = Callable[[str, str, AnalysisConfig], "list[Finding]"]


@dataclass(frozen=True)
class ProfilerHooks:
    hooks: tuple[tuple[str, HookFn], ...]  # (flag, function) for each requested check that is available
    notes: tuple[str, ...]  # one line for each requested check that is not

    def findings(self, path: str, text: str, config: AnalysisConfig) -> list[Finding]:
        found: list[Finding] = []
        for _flag, hook in self.hooks:
            found.extend(hook(path, text, config))
        return found


def _import_hooks() -> ModuleType | None:
    try:
        return importlib.import_module(HOOKS_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name and HOOKS_MODULE.startswith(exc.name):
            return None
        raise


def load_hooks(compile: bool, test: bool) -> ProfilerHooks:
    wanted = [flag for flag, on in (("compile", compile), ("test", test)) if on]
    if not wanted:
        return ProfilerHooks((), ())
    module = _import_hooks()
    hooks: list[tuple[str, HookFn]] = []
    notes: list[str] = []
    for flag in wanted:
        fn = getattr(module, f"{flag}_findings", None) if module is not None else None
        if callable(fn):
            hooks.append((flag, fn))
        else:
            notes.append(f"cudalens: --{flag} is not available yet in this build; static checks only")
    return ProfilerHooks(tuple(hooks), tuple(notes))
