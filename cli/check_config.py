"""The configuration each checked file gets: `[tool.cudalens]` of the pyproject.toml nearest to it (or the file
given with `--config`), with the command line's options on top.

Rule selection layers as in ruff: a `--select` on the command line starts a new selection (the config's
`select` and `ignore` no longer apply), a lone `--ignore` adds to the config's, and `--extend-select` adds to
whatever was selected. A configuration with any problem stops the check (exit 2, a line per problem): a
check that ran with settings other than the ones written would pass or fail for the wrong reason.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

from cudalens.analysis.config import AnalysisConfig, ConfigResult, unknown_codes, with_selection
from cudalens.cli.escape import printable
from cudalens.cli.main import UsageError
from cudalens.workspace.config import load_config, load_config_file
from cudalens.workspace.files import matches_exclude


class ConfigError(UsageError):
    """A configuration that cannot be used: a line per problem, exit status 2."""

    def __init__(self, problems: list[str]) -> None:
        # escaped here, before the lines are joined, so a problem quoting a newline stays one line
        super().__init__("\n".join(printable(p) for p in problems))


def parse_code_list(value: str) -> tuple[str, ...]:
    """`CL1,CL301` → ("CL1", "CL301"); an argparse type, so a bad entry is a one-line usage error."""
    codes = tuple(c.strip().upper() for c in value.split(",") if c.strip())
    bad = unknown_codes(codes)
    if bad:
        raise argparse.ArgumentTypeError(
            f"not a rule code or prefix: {', '.join(bad)} (codes look like CL101, prefixes CL1; "
            "`cudalens rules` lists them)"
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
        config = with_selection(config, self.select, self.ignore, self.extend_select)
        changes: dict = {}
        if self.exclude is not None:
            changes["exclude"] = self.exclude
        if self.fail_level is not None:
            changes["fail_level"] = self.fail_level
        if self.min_severity is not None:
            changes["min_severity"] = self.min_severity
        return replace(config, **changes)


class ConfigResolver:
    """Finds and caches the configuration of each folder; raises ConfigError for one that has problems."""

    def __init__(self, overrides: Overrides, config_file: Path | None, cwd: Path) -> None:
        self.overrides = overrides
        self.cwd = cwd
        self._by_folder: dict[Path, tuple[AnalysisConfig, Path]] = {}
        self._fixed = self._finish(load_config_file(config_file)) if config_file is not None else None

    def _finish(self, result: ConfigResult) -> tuple[AnalysisConfig, Path]:
        if result.errors:
            raise ConfigError(result.errors)
        return self.overrides.apply(result.config), result.source.parent if result.source else self.cwd

    def resolve(self, path: Path) -> tuple[AnalysisConfig, Path]:
        """The file's (or folder's) configuration and the folder its exclude patterns are relative to."""
        if self._fixed is not None:
            return self._fixed
        folder = (path if path.is_dir() else path.parent).resolve()
        if folder not in self._by_folder:
            result = load_config(folder)
            source_key = result.source.parent.resolve() if result.source else None
            # every folder under one pyproject shares its configuration
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
