"""`[tool.cudalens]` in the nearest pyproject.toml, or in a file named with `cudalens check --config`, read
into an `AnalysisConfig` (analysis/config.py checks the values).

Every problem is one line in `ConfigResult.errors`, naming the file: TOML that does not parse or is not UTF-8,
a file that cannot be read, and whatever analysis/config.py finds wrong with the table's settings.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from cudalens.analysis.config import AnalysisConfig, ConfigResult, config_from_mapping


def config_from_table(table: Any, path: Path) -> ConfigResult:
    """Settings read from the `[tool.cudalens]` table of `path`; each problem names the file. Include folders
    are made absolute against the file's folder: nvcc runs elsewhere (a temporary folder on save)."""
    if not isinstance(table, dict):
        return ConfigResult(AnalysisConfig(), path, [f"{path}: [tool.cudalens] is not a table"])
    result = config_from_mapping(table)
    config = result.config
    config = replace(config, include_dirs=tuple(str(path.parent / d) for d in config.include_dirs))
    return ConfigResult(config, path, [f"{path}: {e}" for e in result.errors])


def _read_toml(path: Path) -> tuple[dict[str, Any], str | None]:
    """The file's TOML, or the one-line reason it has none."""
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8")), None
    except OSError as exc:
        return {}, f"cannot read config file {path}: {exc.strerror or exc}"
    except UnicodeDecodeError:
        return {}, f"{path} is not valid TOML: it is not UTF-8 text"
    except tomllib.TOMLDecodeError as exc:
        return {}, f"{path} is not valid TOML: {exc}"


def load_config(start: Path) -> ConfigResult:
    """The configuration of the files in `start` (a folder or a file): the nearest pyproject.toml at or above
    it that has a [tool.cudalens] table. One on the way that does not parse is an error, not skipped: it may
    be the one meant to configure cudalens (ruff stops on it too)."""
    here = start.resolve()
    here = here if here.is_dir() else here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        data, error = _read_toml(candidate)
        if error is not None:
            return ConfigResult(AnalysisConfig(), candidate, [error])
        tool = data.get("tool")
        if isinstance(tool, dict) and "cudalens" in tool:
            return config_from_table(tool["cudalens"], candidate)
    return ConfigResult(AnalysisConfig())


def load_config_file(path: Path) -> ConfigResult:
    """A file named on purpose (`cudalens check --config`): a pyproject.toml, whose [tool.cudalens] table is
    read, or a TOML file whose top level is that table."""
    data, error = _read_toml(path)
    if error is not None:
        return ConfigResult(AnalysisConfig(), path, [error])
    tool = data.get("tool")
    if path.name == "pyproject.toml" or isinstance(tool, dict):
        if not (isinstance(tool, dict) and "cudalens" in tool):
            return ConfigResult(AnalysisConfig(), path, [f"{path}: has no [tool.cudalens] table"])
        return config_from_table(tool["cudalens"], path)
    return config_from_table(data, path)
