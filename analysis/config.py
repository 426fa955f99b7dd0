"""Analysis settings: `[tool.cudalens]` in the nearest pyproject.toml, overridable by the CLI and the editor.

A bad value never stops anything: it is reported once (as a message in `ConfigResult.errors`) and the default
is used, the way jedi-language-server treats its initialization options.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from cudalens.analysis.workspace_keys import workspace_refusal

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

SEVERITIES = ("error", "warning", "info", "hint")


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
    warp_size: int = 32

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


def _coerce(name: str, default: Any, value: Any, errors: list[str]) -> Any:
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        errors.append(f"cudalens: setting '{name}' must be a list of strings; using the default")
        return default
    if isinstance(default, bool) or not isinstance(value, type(default)):
        errors.append(
            f"cudalens: setting '{name}' must be a {type(default).__name__}, not {value!r}; using the default"
        )
        return default
    if name in ("fail_level", "min_severity") and value not in SEVERITIES:
        errors.append(f"cudalens: setting '{name}' must be one of {', '.join(SEVERITIES)}; using the default")
        return default
    return value


def config_from_mapping(values: dict[str, Any], base: AnalysisConfig | None = None) -> ConfigResult:
    """Settings from a mapping (keys in kebab-case or snake_case); unknown keys and bad values are reported."""
    base = base or AnalysisConfig()
    known = {f.name: getattr(base, f.name) for f in fields(AnalysisConfig)}
    changes: dict[str, Any] = {}
    errors: list[str] = []
    for key, value in values.items():
        name = key.replace("-", "_")
        if refused := workspace_refusal(key):  # a repository's file: rules and display only
            errors.append(refused)
            continue
        if name not in known:
            errors.append(f"cudalens: unknown setting '{key}' ignored")
            continue
        changes[name] = _coerce(key, known[name], value, errors)
    return ConfigResult(replace(base, **changes), None, errors)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.cudalens] table."""
    here = start if start.is_dir() else start.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8", errors="replace"))
            except tomllib.TOMLDecodeError:
                continue
            if "cudalens" in data.get("tool", {}):
                return candidate
    return None


def load_config(start: Path) -> ConfigResult:
    path = find_pyproject(start.resolve())
    if path is None:
        return ConfigResult(AnalysisConfig())
    table = tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))["tool"]["cudalens"]
    if not isinstance(table, dict):
        return ConfigResult(AnalysisConfig(), path, [f"cudalens: [tool.cudalens] in {path} is not a table"])
    return config_from_table(table, path)


def config_from_table(table: dict[str, Any], path: Path) -> ConfigResult:
    """Settings read from the `[tool.cudalens]` table of `path`; each problem names the file."""
    result = config_from_mapping(table)
    result.source = path
    result.errors = [f"{e} ({path})" for e in result.errors]
    return result
