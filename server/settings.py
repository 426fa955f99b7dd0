"""The server's settings: dataclasses with a default for every field, read from the editor's
`initializationOptions` / `workspace/configuration` (section `cudalens`, camelCase keys) and merged over
`[tool.cudalens]` from pyproject.toml.

A bad value never stops the server: it is reported (the caller shows it once and logs it) and the default is
kept, as jedi-language-server does with its initialization options.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, get_type_hints

from cudalens.analysis.config import AnalysisConfig

LOG_LEVELS = ("error", "warning", "info", "debug")


@dataclass(frozen=True)
class OnSave:
    """What runs when a document is saved. Compiling needs only nvcc, so it is on wherever nvcc is found
    (None: decided then); the rest runs the user's code, so the user opts in."""

    compile: bool | None = None
    test: bool = False
    time: bool = False
    profile: bool = False

    @property
    def compiles(self) -> bool:
        return self.compile if self.compile is not None else shutil.which("nvcc") is not None


@dataclass(frozen=True)
class WorkerSettings:
    python: str = sys.executable
    timeout_seconds: float = 300.0


@dataclass(frozen=True)
class CoderSettings:
    base_url: str = ""  # empty: api.openai.com
    model: str = "o3"
    api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable that holds the key
    temperature: float | None = None  # None: not sent (reasoning models refuse it)
    reasoning_effort: str = ""
    timeout_seconds: float = 300.0
    retries: int = 4
    stream: bool = False
    price_in_per_1k: float = 0.0  # USD per 1000 prompt tokens, for the cost in the summary
    price_out_per_1k: float = 0.0


@dataclass(frozen=True)
class OptimizeSettings:
    rounds: int = 10
    budget_usd: float = 1.0
    patience: int = 4  # stop after this many rounds without a faster correct candidate
    allow_torch_ops: bool = False  # accept candidates whose ModelNew uses PyTorch ops instead of a kernel


@dataclass(frozen=True)
class ServerSettings:
    # None: not set by the editor, so `[tool.cudalens]` (or the analyzer's default) decides.
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    arch: str | None = None
    on_save: OnSave = field(default_factory=OnSave)
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    coder: CoderSettings = field(default_factory=CoderSettings)
    optimize: OptimizeSettings = field(default_factory=OptimizeSettings)
    log_level: str | None = None  # None: as `cudalens serve --log-level` says
    # Quiet time after an edit before analysing; a burst of keystrokes is analysed once.
    debounce_ms: int = 15

    def analysis_config(self, base: AnalysisConfig) -> AnalysisConfig:
        """The project's `[tool.cudalens]` config with the editor's settings on top."""
        changes: dict[str, Any] = {}
        if self.select is not None:  # exactly these codes, as `cudalens check --select` means
            changes["select"] = self.select
            changes["extend_select"] = ()
        if self.ignore is not None:
            changes["ignore"] = self.ignore
        if self.arch is not None:
            changes["arch"] = self.arch
        return replace(base, **changes)


@dataclass
class ParsedSettings:
    settings: ServerSettings
    errors: list[str] = field(default_factory=list)  # shown to the user once, then defaults are used
    unknown: list[str] = field(default_factory=list)  # logged only: editors send their own keys too


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])|(?<=[a-z])(?=[0-9])", "_", name).lower()  # priceInPer1k → price_in_per_1k


def _coerce(key: str, annotation: Any, default: Any, value: Any, out: ParsedSettings) -> Any:
    def bad(expected: str) -> Any:
        out.errors.append(f"cudalens: setting '{key}' must be {expected}, not {value!r}; using the default")
        return default

    text = str(annotation).replace(" | None", "")  # None is never sent as a value: it means "unset"
    if "tuple" in text:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        return bad("a list of strings")
    if annotation is bool or text == "bool":
        return value if isinstance(value, bool) else bad("true or false")
    if annotation is int or text == "int":
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        return bad("a whole number ≥ 0")
    if annotation is float or text == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value)
        return bad("a number ≥ 0")
    if isinstance(value, str):
        return value
    return bad("a string")


def _parse_into(cls: type, values: Any, prefix: str, out: ParsedSettings) -> Any:
    default = cls()
    if not isinstance(values, dict):
        if values is not None:
            out.errors.append(f"cudalens: setting '{prefix or 'cudalens'}' must be an object; using the defaults")
        return default
    hints = get_type_hints(cls)
    by_name = {f.name: f for f in fields(cls)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        name = _snake(key)
        full = f"{prefix}.{key}" if prefix else key
        if name not in by_name:
            out.unknown.append(full)
            continue
        current = getattr(default, name)
        if is_dataclass(current):
            changes[name] = _parse_into(type(current), value, full, out)
        elif value is None:
            continue
        else:
            changes[name] = _coerce(full, hints[name], current, value, out)
    result = replace(default, **changes)
    if cls is ServerSettings and result.log_level not in (None, *LOG_LEVELS):
        out.errors.append(
            f"cudalens: setting 'logLevel' must be one of {', '.join(LOG_LEVELS)}, not {result.log_level!r};"
            " using the default"
        )
        result = replace(result, log_level=default.log_level)
    return result


def parse_settings(values: Any) -> ParsedSettings:
    """Settings from the editor's `cudalens` object (camelCase or snake_case keys, nested objects)."""
    out = ParsedSettings(ServerSettings())
    out.settings = _parse_into(ServerSettings, values, "", out)
    return out


def settings_from_initialization_options(options: Any) -> ParsedSettings:
    """`initializationOptions` may be `{"settings": {...}}` (the shared contract) or the settings themselves."""
    if isinstance(options, dict) and "settings" in options:
        options = options["settings"]
    if isinstance(options, dict) and isinstance(options.get("cudalens"), dict):
        options = options["cudalens"]
    return parse_settings(options)
