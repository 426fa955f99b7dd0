"""A small model built in the tests: a conv, a group_norm and an attention block (issue 18's CI model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.model.ci_model import MODEL


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    path = tmp_path_factory.mktemp("model") / "block.py"
    path.write_text(MODEL, encoding="utf-8")
    return path
