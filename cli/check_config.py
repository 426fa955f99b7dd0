"""The configuration each checked file gets: `[tool.cudalens]` of the pyproject.toml nearest to it (or the file
given with `--config`), with the command line's options on top.

Rule selection layers as in ruff: a `--select` on the command line starts a new selection (the config's
`select` and `ignore` no longer apply), a lone `--ignore` adds to the config's, and `--extend-select` adds to
whatever was selected. Bad settings are warned about once each and their defaults used.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from cudalens.analysis.config import AnalysisConfig, ConfigResult, config_from_table, load_config
from cudalens.analysis.files import matches_exclude

_CODE_PREFIX = re.compile(r"^CL\d{0,3}$")


class ConfigError(Exception):
    """A `--config` file that cannot be used: one line, exit status 2."""


def parse_code_list(value: str) -> tuple[str, ...]:
    """`CL1,CL301` → ("CL1", "CL301"); an argparse type, so a bad entry is a one-line usage error."""
    codes = tuple(c.strip().upper() for c in value.split(",") if c.strip())
    bad = [c for c in codes if not _CODE_PREFIX.match(c)]
    if bad:
        raise argparse.ArgumentTypeError(
            f"not a rule code or prefix: {', '.join(bad)} (codes look like CL101, prefixes CL1)"
        )
    return codes


@dataclass(frozen=True)
class Overrides:
    """What the command line says about configuration; None means "as configured"."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    fail_level: str | None = None
    min_severity: str | None = None

    def apply(self, config: AnalysisConfig) -> AnalysisConfig:
        changes: dict = {}
        if self.select is not None:
            changes["select"] = self.select
            changes["extend_select"] = ()
            changes["ignore"] = self.ignore or ()
        elif self.ignore is not None:
            changes["ignore"] = config.ignore + self.ignore
        if self.extend_select:
            changes["extend_select"] = changes.get("extend_select", config.extend_select) + self.extend_select
        if self.exclude is not None:
            changes["exclude"] = self.exclude
        if self.fail_level is not None:
            changes["fail_level"] = self.fail_level
        if self.min_severity is not None:
            changes["min_severity"] = self.min_severity
        return replace(config, **changes)


def _config_file(path: Path) -> ConfigResult:
    """A `--config` file: a pyproject.toml with [tool.cudalens], or a TOML file whose top level is the table."""
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("cudalens", data) if isinstance(data.get("tool"), dict) else data
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.cudalens] in {path} is not a table")
    return config_from_table(table, path)


def _bad_codes(config: AnalysisConfig, source: Path | None) -> list[str]:
    where = f" ({source})" if source else ""
    return [
        f"cudalens: setting '{name}' has {code!r}, which is not a rule code or prefix{where}"
        for name in ("select", "ignore", "extend_select")
        for code in getattr(config, name)
        if not _CODE_PREFIX.match(code)
    ]


class ConfigResolver:
    """Finds and caches the configuration of each folder; warns once per configuration file."""

    def __init__(
        self, overrides: Overrides, config_file: Path | None, warn: Callable[[str], None], cwd: Path
    ) -> None:
        self.overrides = overrides
        self.warn = warn
        self.cwd = cwd
        self._by_folder: dict[Path, tuple[AnalysisConfig, Path]] = {}
        self._fixed = self._finish(_config_file(config_file)) if config_file is not None else None

    def _finish(self, result: ConfigResult) -> tuple[AnalysisConfig, Path]:
        for message in result.errors + _bad_codes(result.config, result.source):
            self.warn(message)
        root = result.source.parent if result.source else self.cwd
        config = self.overrides.apply(result.config)
        # include-dirs are written relative to the pyproject.toml, not to wherever the check runs from
        config = replace(config, include_dirs=tuple(str(root / d) for d in config.include_dirs))
        return config, root

    def _load(self, folder: Path) -> ConfigResult:
        try:
            return load_config(folder)
        except (OSError, UnicodeError, KeyError, TypeError) as exc:
            return ConfigResult(AnalysisConfig(), None, [f"cudalens: cannot read configuration: {exc}"])

    def resolve(self, path: Path) -> tuple[AnalysisConfig, Path]:
        """The file's (or folder's) configuration and the folder its exclude patterns are relative to."""
        if self._fixed is not None:
            return self._fixed
        folder = (path if path.is_dir() else path.parent).resolve()
        if folder not in self._by_folder:
            result = self._load(folder)
            source_key = result.source.parent.resolve() if result.source else None
            # every folder under one pyproject shares its configuration, and its warnings are said once
            cached = self._by_folder.get(source_key) if source_key is not None else None
            self._by_folder[folder] = cached or self._finish(result)
            if source_key is not None:
                self._by_folder.setdefault(source_key, self._by_folder[folder])
        return self._by_folder[folder]

    def config_for(self, path: Path) -> AnalysisConfig:
        return self.resolve(path)[0]

    def excluded(self, path: Path) -> bool:
        config, root = self.resolve(path)
        return matches_exclude(path, config.exclude, root)
