"""Which `[tool.cudalens]` keys a repository may set (analysis/workspace_keys.py): rules and display only."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.workspace_keys import workspace_refusal
from cudalens.workspace.config import config_from_table


@pytest.mark.parametrize("name", [f.name for f in fields(AnalysisConfig)])
def test_every_rule_and_display_key_is_allowed_in_any_spelling(name):
    assert workspace_refusal(name) is None
    assert workspace_refusal(name.replace("_", "-")) is None


@pytest.mark.parametrize("key", [
    "coder", "coder.base-url", "base-url", "baseUrl", "api-key-env", "apiKeyEnv", "api_key", "endpoint",
    "nvcc", "nvcc-path", "ncu", "ncuPath", "python", "python-path", "interpreter", "path", "worker",
    "compute-sanitizer", "ccbin", "on-save", "onSave", "on_save", "optimize", "trust", "extra-nvcc-flags",
    "host-compiler-command", "coder-url",
])
def test_programs_endpoints_and_running_code_are_refused_in_one_line(key):
    message = workspace_refusal(key)
    assert message is not None and f"'{key}'" in message and "\n" not in message
    assert "user settings" in message


def test_the_loader_refuses_them_and_keeps_the_rest(tmp_path: Path):
    table = {"ignore": ["CL301"], "coder": {"base-url": "http://x/v1"}, "nvcc": "./evil", "bogus": 1}
    result = config_from_table(table, tmp_path / "pyproject.toml")
    assert result.config.ignore == ("CL301",)
    [coder, nvcc, bogus] = result.errors
    assert "may not set 'coder'" in coder and "Coder" in coder and str(tmp_path) in coder
    assert "may not set 'nvcc'" in nvcc and "program" in nvcc
    assert "unknown setting 'bogus'" in bogus
