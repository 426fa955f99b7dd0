"""The Judge-accuracy suite's cases are well-formed: each file is a KernelBench problem with `ModelNew`, and the
kernel its cause names is one the analyzer finds there (the GPU run: `benchmarks/judge_suite/run.py`)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from cudalens.agents.judge.methods import METHODS
from cudalens.analysis.api import analyze_text

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "benchmarks" / "judge_suite"
CASES = runpy.run_path(str(SUITE / "run.py"), run_name="judge_suite")["CASES"]


def test_every_case_file_is_listed_once() -> None:
    assert sorted(c.file for c in CASES) == sorted(p.name for p in SUITE.glob("[0-9][0-9]_*.py"))
    assert len({c.cause for c in CASES}) == len(CASES) == 9


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.file)
def test_case_names_a_kernel_of_its_file_and_a_known_method(case) -> None:
    text = (SUITE / case.file).read_text(encoding="utf-8")
    assert "class Model(" in text and "class ModelNew(" in text and "def get_inputs" in text
    assert case.kernel in {k.name for k in analyze_text(case.file, text).kernels}
    assert case.method in METHODS
