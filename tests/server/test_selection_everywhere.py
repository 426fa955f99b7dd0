"""One rule selection for the terminal and the editor (issue 33): `[tool.cudalens]` with the command line's or the
editor's `select`/`ignore` laid over it gives the same rules, and the editor's values are checked with
`[tool.cudalens]`'s words (issue 34, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.analysis.codes import REGISTRY
from cudalens.analysis.config import config_from_mapping
from cudalens.cli.check_config import ConfigResolver, Overrides
from cudalens.server.settings import parse_settings
from cudalens.workspace.config import load_config

CASES = [
    ({"ignore": ["CL301"]}, ("CL3",), None),
    ({"ignore": ["CL301"]}, None, ("CL302",)),
    ({"select": ["CL1", "CL3"], "extend-select": ["CL5"]}, ("CL3",), ("CL303",)),
    ({"select": ["CL2"]}, None, None),
    ({}, ("CL301",), ("CL3",)),
]


def _project(tmp_path: Path, table: dict) -> Path:
    lines = ["[tool.cudalens]"] + [f"{k} = {v!r}".replace("'", '"') for k, v in table.items()]
    (tmp_path / "pyproject.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    return tmp_path / "k.cu"


@pytest.mark.parametrize(("table", "select", "ignore"), CASES)
def test_the_terminal_and_the_editor_enable_the_same_rules(tmp_path, table, select, ignore):
    path = _project(tmp_path, table)
    cli = ConfigResolver(Overrides(select=select, ignore=ignore), None, tmp_path).config_for(path)
    editor_values = {k: list(v) for k, v in (("select", select), ("ignore", ignore)) if v is not None}
    parsed = parse_settings(editor_values)
    assert parsed.errors == []
    editor = parsed.settings.analysis_config(load_config(path).config)
    assert {c for c in REGISTRY if cli.enabled(c)} == {c for c in REGISTRY if editor.enabled(c)}


def test_a_new_selection_starts_afresh_as_ruffs_command_line_does(tmp_path):
    path = _project(tmp_path, {"ignore": ["CL301"]})
    cli = ConfigResolver(Overrides(select=("CL3",)), None, tmp_path).config_for(path)
    assert cli.enabled("CL301") and not cli.enabled("CL101")


@pytest.mark.parametrize(("values", "words"), [
    ({"select": ["CL999"]}, "setting 'select' has 'CL999': not a rule code or prefix"),
    ({"select": ["CL30l"]}, "setting 'select' has 'CL30l': not a rule code or prefix"),
    ({"ignore": ["CL3O1"]}, "setting 'ignore' has 'CL3O1': not a rule code or prefix"),
    ({"arch": "sm_90 -ccbin /tmp/x"}, "setting 'arch' is not a GPU architecture (sm_90, 9.0, native): 'sm_90 -ccbin /tmp/x'"),
])
def test_a_bad_editor_value_gets_the_pyprojects_words_and_is_not_used(values, words):
    parsed = parse_settings(values)
    assert [e.removeprefix("cudalens: ").split("; using")[0] for e in parsed.errors] == [words]
    key = next(iter(values))
    assert getattr(parsed.settings, key) is None  # `[tool.cudalens]` or the default decides
    pyproject = config_from_mapping(values)
    assert pyproject.errors == [words]


def test_both_spellings_of_one_key_are_an_error_not_last_wins():
    result = config_from_mapping({"fail-level": "error", "fail_level": "info"})
    assert result.errors == ["setting 'fail_level' is given twice ('fail-level' and 'fail_level'): keep one"]
    assert result.config.fail_level == "warning"


def test_warp_size_is_no_longer_a_setting():
    assert config_from_mapping({"warp-size": 0}).errors[0].startswith("unknown setting 'warp-size'")
