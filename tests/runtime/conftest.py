"""Fixtures of the run-time tests: the child's job modules, as the parent imports them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from cudalens.worker.child.jobs import test_job as _test_job
from cudalens.worker.child.lib import harness_correctness, harness_timing

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def correctness():
    return harness_correctness


@pytest.fixture(scope="session")
def timing():
    return harness_timing


@pytest.fixture(scope="session")
def test_job():
    return _test_job


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def adversarial():
    """tests/runtime/adversarial/assemble.py: assembles the adversarial corpus's cases from their bases."""
    spec = importlib.util.spec_from_file_location("adversarial_assemble",
                                                  Path(__file__).resolve().parent / "adversarial" / "assemble.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
