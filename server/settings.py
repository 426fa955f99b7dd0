"""The server's settings: dataclasses with a default for every field, read from the editor's
`initializationOptions` / `workspace/configuration` (section `cudalens`, camelCase keys) and merged over
`[tool.cudalens]` from pyproject.toml (which may choose rules and display only: analysis/workspace_keys.py).

This is the one schema: every numeric setting carries its range here (`bounded`), and the defaults are the safe
ones for every client — nothing runs on save unless the user turns it on. A bad value never stops the server: it
is reported (the caller shows it once and logs it) and the default is kept, as jedi-language-server does with its
initialization options. What the editor says about workspace trust (the `trust` object) is read by trust.py.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import Field, dataclass, field, fields, is_dataclass, replace
from typing import Any, get_type_hints

from cudalens.analysis.config import AnalysisConfig

LOG_LEVELS = ("error", "warning", "info", "debug")
RANGE = "range"  # a numeric field's metadata key: (lowest, highest) accepted value


def bounded(default: float | None, low: float, high: float) -> Any:
    """A numeric setting and the values it accepts. Out of range is a bad value (shown, default used): an absurd
    `debounceMs` or timeout would otherwise mean diagnostics or results that never arrive."""
    return field(default=default, metadata={RANGE: (low, high)})


@dataclass(frozen=True)
class OnSave:
    """What runs when a document is saved. All off unless the user turns a step on: each runs a program on the
    workspace's files (nvcc for compile; the user's Python for the rest), the same default for every client."""

    compile: bool = False
    test: bool = False
    time: bool = False
    profile: bool = False


@dataclass(frozen=True)
class WorkerSettings:
    python: str = sys.executable
    timeout_seconds: float = bounded(300.0, 1, 7200)


@dataclass(frozen=True)
class CoderSettings:
    base_url: str = ""  # empty: api.openai.com
    model: str = "o3"
    api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable that holds the key
    temperature: float | None = bounded(None, 0, 2)  # None: not sent (reasoning models refuse it)
    reasoning_effort: str = ""
    timeout_seconds: float = bounded(300.0, 1, 3600)
    retries: int = bounded(4, 0, 20)
    stream: bool = False
    price_in_per_1k: float = bounded(0.0, 0, 1000)  # USD per 1000 prompt tokens, for the cost in the summary
    price_out_per_1k: float = bounded(0.0, 0, 1000)


@dataclass(frozen=True)
class OptimizeSettings:
    rounds: int = bounded(10, 1, 1000)
    budget_usd: float = bounded(1.0, 0, 10_000)
    patience: int = bounded(4, 1, 1000)  # stop after this many rounds without a faster correct candidate
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
    debounce_ms: int = bounded(15, 0, 10_000)

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


@dataclass(frozen=True)
class ClientTrust:
    """What the editor says about where the settings came from: the `trust` object beside the settings
    (docs/security.md). A client that says nothing sends its user's own settings, so it is trusted."""

    trusted: bool = True  # VS Code's workspace trust: False is Restricted Mode
    user: ServerSettings | None = None  # the settings of the user's own level (user/remote), when sent
    coder_confirmed: tuple[str, str] | None = None  # (baseUrl, apiKeyEnv) the user confirmed for this workspace


@dataclass
class ParsedSettings:
    settings: ServerSettings
    errors: list[str] = field(default_factory=list)  # shown to the user once, then defaults are used
    unknown: list[str] = field(default_factory=list)  # logged only: editors send their own keys too
    trust: ClientTrust | None = None  # None: the client said nothing this time (the last word stands)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])|(?<=[a-z])(?=[0-9])", "_", name).lower()  # priceInPer1k → price_in_per_1k


def value_range(f: Field) -> tuple[float, float]:
    """The values a numeric field accepts (a field without `bounded`: any number ≥ 0)."""
    return f.metadata.get(RANGE, (0, math.inf))


def _number_words(low: float, high: float) -> str:
    def show(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else str(x)

    return f"from {show(low)} to {show(high)}" if high != math.inf else f"≥ {show(low)}"


def _coerce(key: str, f: Field, annotation: Any, default: Any, value: Any, out: ParsedSettings) -> Any:
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
    if text in ("int", "float") or annotation in (int, float):
        whole = annotation is int or text == "int"
        low, high = value_range(f)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and low <= value <= high and (not whole or float(value).is_integer()):  # NaN fails too
            return int(value) if whole else float(value)
        return bad(f"{'a whole number' if whole else 'a number'} {_number_words(low, high)}")
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
        if not prefix and name == "trust":
            continue  # what the editor says about workspace trust, not a setting: trust.py reads it
        if name not in by_name:
            out.unknown.append(full)
            continue
        current = getattr(default, name)
        if is_dataclass(current):
            changes[name] = _parse_into(type(current), value, full, out)
        elif value is None:
            continue
        else:
            changes[name] = _coerce(full, by_name[name], hints[name], current, value, out)
    result = replace(default, **changes)
    if cls is ServerSettings and result.log_level not in (None, *LOG_LEVELS):
        out.errors.append(
            f"cudalens: setting 'logLevel' must be one of {', '.join(LOG_LEVELS)}, not {result.log_level!r};"
            " using the default"
        )
        result = replace(result, log_level=default.log_level)
    return result


def _parse_trust(values: Any, out: ParsedSettings) -> ClientTrust:
    """`{"trusted": bool, "user": {settings}, "coderConfirmed": {"baseUrl", "apiKeyEnv"}}`. Anything unreadable
    counts as the safe answer: not trusted, nothing confirmed."""
    if not isinstance(values, dict):
        out.errors.append("cudalens: 'trust' must be an object; the workspace is taken as not trusted")
        return ClientTrust(trusted=False)
    trusted = values.get("trusted")
    if not isinstance(trusted, bool):
        out.errors.append(f"cudalens: 'trust.trusted' must be true or false, not {trusted!r}; taken as false")
        trusted = False
    user = None
    if values.get("user") is not None:  # its own problems are the effective settings' problems, reported there
        user = _parse_into(ServerSettings, values["user"], "", ParsedSettings(ServerSettings()))
    confirmed, pair = values.get("coderConfirmed"), None
    if isinstance(confirmed, dict):
        url, env = confirmed.get("baseUrl"), confirmed.get("apiKeyEnv")
        if isinstance(url, str) and isinstance(env, str):
            pair = (url, env)
    return ClientTrust(trusted, user, pair)


def parse_settings(values: Any) -> ParsedSettings:
    """Settings from the editor's `cudalens` object (camelCase or snake_case keys, nested objects), and the
    `trust` object in it when the editor sends one."""
    out = ParsedSettings(ServerSettings())
    out.settings = _parse_into(ServerSettings, values, "", out)
    if isinstance(values, dict) and "trust" in values:
        out.trust = _parse_trust(values["trust"], out)
    return out


def settings_from_initialization_options(options: Any) -> ParsedSettings:
    """`initializationOptions` may be `{"settings": {...}}` (the shared contract) or the settings themselves."""
    if isinstance(options, dict) and "settings" in options:
        options = options["settings"]
    if isinstance(options, dict) and isinstance(options.get("cudalens"), dict):
        options = options["cudalens"]
    return parse_settings(options)
