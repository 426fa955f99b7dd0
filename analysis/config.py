"""Analysis settings: the `AnalysisConfig` dataclass and how a mapping of settings becomes one, overridable by
the CLI and the editor. Reading them from `[tool.cudalens]` of a pyproject.toml is workspace/config.py's.

Every problem with the configuration is one line in `ConfigResult.errors`: a key that is not a setting, a value
of the wrong type or outside its choices, a rule code that does not exist — whichever spelling the key has
(`fail-level` or `fail_level`). `cudalens check` stops on them (exit 2), so a pull request cannot switch the
check off without it showing; the language server shows them once and uses the defaults for the bad values.
Unknown keys are errors too, as in ruff: a misspelt `ignroe` would otherwise be a setting that silently does
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from cudalens.analysis.codes import REGISTRY
from cudalens.analysis.workspace_keys import workspace_refusal

SEVERITIES = ("error", "warning", "info", "hint")
_CHOICES = {"fail_level": SEVERITIES, "min_severity": SEVERITIES}
# what nvcc's -arch takes from us (resolve_arch turns "9.0" into sm_90); anything else would fail every compile
_PATTERNS = {"arch": re.compile(r"auto|native|sm_\d{2,3}[af]?|\d{1,2}\.?\d[af]?")}
_CODE_LISTS = ("select", "ignore", "extend_select")
_CODE_SHAPE = re.compile(r"CL\d{0,3}")


@dataclass(frozen=True)
class AnalysisConfig:
    select: tuple[str, ...] = ()  # codes or prefixes ("CL1", "CL301"); empty = all
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    fail_level: str = "warning"  # `cudalens check` exits 1 when a finding is at least this severe
    min_severity: str = "info"  # findings below this are not reported
    exclude: tuple[str, ...] = ()  # glob patterns of paths the CLI skips
    include_dirs: tuple[str, ...] = ()  # extra folders to look for #include'd headers in
    arch: str = "sm_90"

    def enabled(self, code: str) -> bool:
        chosen = self.select + self.extend_select
        if chosen and not any(code.startswith(p) for p in chosen):
            return False
        # the more specific of select and ignore wins, as in ruff
        ign = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        sel = max((len(p) for p in chosen if code.startswith(p)), default=0 if not chosen else -1)
        return ign < 0 or sel > ign


@dataclass
class ConfigResult:
    config: AnalysisConfig
    source: Path | None = None
    errors: list[str] = field(default_factory=list)


def unknown_codes(codes: Iterable[str]) -> list[str]:
    """The entries that are neither a rule code nor the prefix of one (`CL1`, `CL30`): `CL999` and `bogus`
    would select nothing, so a selection made of them would turn every rule off without a word."""
    return [c for c in codes if not (_CODE_SHAPE.fullmatch(c) and any(k.startswith(c) for k in REGISTRY))]


def _coerce(key: str, name: str, default: Any, value: Any, errors: list[str]) -> Any:
    """`value` checked against the default's type and the setting's choices; `key` as the user spelt it."""
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            errors.append(f"setting '{key}' must be a list of strings, not {value!r}")
            return default
        bad = unknown_codes(value) if name in _CODE_LISTS else []
        if bad:
            errors.append(f"setting '{key}' has {', '.join(map(repr, bad))}: not a rule code or prefix")
            return default
        return tuple(value)
    if isinstance(value, bool) != isinstance(default, bool) or not isinstance(value, type(default)):
        errors.append(f"setting '{key}' must be a {type(default).__name__}, not {value!r}")
        return default
    choices = _CHOICES.get(name)
    if choices is not None and value not in choices:
        errors.append(f"setting '{key}' must be one of {', '.join(choices)}, not {value!r}")
        return default
    pattern = _PATTERNS.get(name)
    if pattern is not None and not pattern.fullmatch(value):
        errors.append(f"setting '{key}' is not a GPU architecture (sm_90, 9.0, native): {value!r}")
        return default
    return value


def config_from_mapping(values: dict[str, Any], base: AnalysisConfig | None = None) -> ConfigResult:
    """Settings from a mapping (keys in kebab-case or snake_case); unknown keys, a key given in both spellings
    and bad values are reported and leave the base's value."""
    base = base or AnalysisConfig()
    known = {f.name: getattr(base, f.name) for f in fields(AnalysisConfig)}
    changes: dict[str, Any] = {}
    errors: list[str] = []
    spelt: dict[str, str] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if refused := workspace_refusal(key):  # a repository's file: rules and display only
            errors.append(refused)
            continue
        if name not in known:
            errors.append(f"unknown setting '{key}' (settings: {', '.join(n.replace('_', '-') for n in known)})")
            continue
        if name in spelt:  # `fail-level` and `fail_level`: which one wins would be the TOML parser's order
            errors.append(f"setting '{key}' is given twice ('{spelt[name]}' and '{key}'): keep one")
            changes.pop(name, None)
            continue
        spelt[name] = key
        changes[name] = _coerce(key, name, known[name], value, errors)
    return ConfigResult(replace(base, **changes), None, errors)


def checked_overrides(values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """An editor's or a command line's values for settings of `AnalysisConfig` (snake_case names), checked
    as `[tool.cudalens]`'s are, with the same words: (the good ones, one line per bad one)."""
    defaults = AnalysisConfig()
    errors: list[str] = []
    good = {}
    for name, value in values.items():
        if value is None:
            continue
        before = len(errors)
        value = list(value) if isinstance(value, tuple) else value  # typed settings hold tuples, TOML lists
        coerced = _coerce(name.replace("_", "-"), name, getattr(defaults, name), value, errors)
        if len(errors) == before:
            good[name] = coerced
    return good, errors


def with_selection(config: AnalysisConfig, select: tuple[str, ...] | None = None,
                   ignore: tuple[str, ...] | None = None, extend_select: tuple[str, ...] = ()) -> AnalysisConfig:
    """`config` with a selection laid over it, as ruff lays the command line over its configuration: a new
    `select` starts afresh (the configured select, extend-select and ignore are dropped, this layer's ignore
    applies); without one, `ignore` adds to the configured ignore; `extend_select` adds to the selection. The
    one rule selection of `cudalens check --select/--ignore` and of the editor's `select`/`ignore`."""
    changes: dict[str, Any] = {}
    if select is not None:
        changes.update(select=tuple(select), extend_select=(), ignore=tuple(ignore or ()))
    elif ignore is not None:
        changes["ignore"] = config.ignore + tuple(ignore)
    if extend_select:
        changes["extend_select"] = changes.get("extend_select", config.extend_select) + tuple(extend_select)
    return replace(config, **changes)
