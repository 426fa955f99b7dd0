"""Rules over one function's body that apply to kernels and to `__device__` helpers alike (arithmetic,
precision): kernels through the cached per-kernel check, this file's helpers once each through the file-level
check, so a helper called by ten kernels is reported once, at its own lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.bounded_cache import remember
from cudalens.analysis.file_context import FileContext, device_functions
from cudalens.analysis.findings import Finding
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.unit import Function

if TYPE_CHECKING:
    from cudalens.analysis.model import KernelModel


_CACHE_LIMIT = 4096
_helper_cache: dict[tuple, list[Finding]] = {}


class FunctionRule(Rule):
    def check(self, kernel: KernelModel) -> Iterable[Finding]:
        return self.check_function(kernel.context, kernel.function, kernel.name)

    def check_unit(self, unit: FileContext) -> Iterator[Finding]:
        for helper in device_functions(unit.unit):
            yield from self._helper_findings(unit, helper)

    def _helper_findings(self, unit: FileContext, helper: Function) -> list[Finding]:
        """A helper's findings, remembered while its text, place and the unit's definitions stay the same (the
        file-level rules run on every keystroke; a 3,000-line file has dozens of helpers)."""
        key = (self.code, unit.path, unit.to_file is None, ts.text(helper.node), helper.node.start_point,
               unit.unit.definitions_key)
        found = _helper_cache.get(key)
        if found is None:
            found = remember(_helper_cache, key, list(self.check_function(unit, helper, None)), _CACHE_LIMIT)
        return found

    def check_function(self, context: FileContext, function: Function, kernel: str | None) -> Iterable[Finding]:
        """Findings in `function` (`kernel` is its name when it is a kernel, None for a helper)."""
        return ()
