"""The editor's settings: dataclasses with a default for every field, read from `initializationOptions` /
`workspace/configuration` (section `cudalens`, camelCase keys) and merged over `[tool.cudalens]` from
pyproject.toml (which may choose rules and display only: analysis/workspace_keys.py).

One schema: `ServerSettings` nests the Coder's (agents/coder/settings.py), the loop's (agents/optimize_settings.py)
and the worker's (worker/settings.py) schemas, which the CLI's flags share; every field declares its
default, range, words and VS Code scope (`setting`), and settings_export.py writes package.json's contributions
and the docs' tables from them. Values are checked by the one coercion, worker/child/typed_json.py. A bad value never
stops the server: it is reported (the caller shows it once and logs it) and the default is kept, as
jedi-language-server does with its initialization options. The defaults are the safe ones for every client —
nothing runs on save unless the user turns it on. What the editor says about workspace trust (the `trust`
object) is read by trust.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, is_dataclass, replace
from typing import Any, Literal

from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.optimize_settings import OptimizeSettings
from cudalens.analysis.config import AnalysisConfig, checked_overrides, with_selection
from cudalens.worker.child.typed_json import UNSET, TypeMismatch, coerce, field_hints, setting
from cudalens.worker.settings import WorkerSettings


@dataclass(frozen=True)
class OnSave:
    """What runs when a document is saved. All off unless the user turns a step on: each runs a program on the
    workspace's files (nvcc for compile; the user's Python for the rest), the same default for every client."""

    compile: bool = setting(
        False, scope="resource", restricted=True,
        doc="Compile on save: nvcc errors, registers, shared memory, spills, theoretical occupancy (no GPU needed).",
    )
    test: bool = setting(
        False, scope="resource", restricted=True,
        doc="Run the correctness test against the PyTorch reference on save (needs a GPU for CUDA code).",
    )
    time: bool = setting(
        False, scope="resource", restricted=True, doc="Time the kernel against the PyTorch reference on save (needs a GPU).",
    )
    profile: bool = setting(
        False, scope="resource", restricted=True,
        doc="Profile with Nsight Compute on save and show per-line counters (needs a GPU and ncu).",
    )


@dataclass(frozen=True)
class ServerSettings:
    # None: not set by the editor, so `[tool.cudalens]` (or the analyzer's default) decides.
    select: tuple[str, ...] | None = setting(
        None, scope="resource", unset="`[tool.cudalens]`, else every rule",
        doc="Rule codes or prefixes to enable (e.g. `CL1`, `CL301`), instead of `[tool.cudalens]`'s selection and "
            "ignores, as `cudalens check --select` does.",
    )
    ignore: tuple[str, ...] | None = setting(
        None, scope="resource", unset="`[tool.cudalens]`",
        doc="Rule codes or prefixes to turn off, besides `[tool.cudalens]`'s (or with `select`, of that selection).",
    )
    arch: str | None = setting(
        None, scope="resource", unset="`[tool.cudalens]`, else `sm_90`",
        doc="GPU architecture the checks, compiles and occupancy assume (e.g. `sm_90`).",
    )
    on_save: OnSave = field(default_factory=OnSave)
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    coder: CoderSettings = field(default_factory=CoderSettings)
    optimize: OptimizeSettings = field(default_factory=OptimizeSettings)
    log_level: Literal["error", "warning", "info", "debug"] | None = setting(
        None, unset="as `cudalens serve --log-level` says (`info`)", doc="Log level of the server.",
    )
    debounce_ms: int = setting(
        15, range=(0, 10_000),
        doc="Quiet time after an edit before analysing, in milliseconds: a burst of keystrokes is analysed once.",
    )

    def analysis_config(self, base: AnalysisConfig) -> AnalysisConfig:
        """The project's `[tool.cudalens]` config with the editor's settings on top: the selection laid over it
        as `cudalens check --select/--ignore` lays it (`with_selection`)."""
        config = with_selection(base, self.select, self.ignore)
        return config if self.arch is None else replace(config, arch=self.arch)


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


def camel(name: str) -> str:
    """A field's key as the editors write it: price_in_per_1k → priceInPer1k."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _parse_into(cls: type, values: Any, prefix: str, out: ParsedSettings) -> Any:
    default = cls()
    if values == []:  # an empty Lua table (Neovim's `settings = { cudalens = {} }`) goes out as []
        values = {}
    if not isinstance(values, dict):
        if values is not None:
            out.errors.append(f"cudalens: setting '{prefix or 'cudalens'}' must be an object; using the defaults")
        return default
    known = field_hints(cls)
    changes: dict[str, Any] = {}
    for key, value in values.items():
        name = _snake(key)
        full = f"{prefix}.{key}" if prefix else key
        if not prefix and name == "trust":
            continue  # what the editor says about workspace trust, not a setting: trust.py reads it
        if name not in known:
            out.unknown.append(full)
            continue
        f, hint = known[name]
        current = getattr(default, name)
        if is_dataclass(current):
            changes[name] = _parse_into(type(current), value, full, out)
        elif value is None or (value == "" and UNSET in f.metadata):
            continue  # unset: the default, which the field's `unset` words describe
        else:
            try:
                changes[name] = coerce(value, hint, f)
            except TypeMismatch as exc:
                out.errors.append(f"cudalens: setting '{full}' must be {exc.expected}, not {value!r}; using the default")
    return replace(default, **changes)


def _checked(settings: ServerSettings, out: ParsedSettings) -> ServerSettings:
    """The settings the analysis shares with `[tool.cudalens]` checked as there, in the same words: a code that
    is no rule (`CL999`, `CL30l`) would otherwise turn every rule off, or a bad `arch` fail every compile, without
    a word. A bad value is shown, and `[tool.cudalens]` (or the default) decides instead."""
    shared = {"select": settings.select, "ignore": settings.ignore, "arch": settings.arch}
    good, errors = checked_overrides(shared)
    out.errors += [f"cudalens: {e}; using `[tool.cudalens]` or the default" for e in errors]
    return replace(settings, **{name: good.get(name) for name in shared})


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
    out.settings = _checked(_parse_into(ServerSettings, values, "", out), out)
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
