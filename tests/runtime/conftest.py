"""Fixtures of the run-time tests: the job modules loaded by path, as the worker loads them."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "profiler" / "jobs"
DATA = Path(__file__).resolve().parent / "data"

sibling = runpy.run_path(str(JOBS / "jobkit.py"))["sibling"]


@pytest.fixture(scope="session")
def correctness():
    return sibling("harness_correctness")


@pytest.fixture(scope="session")
def timing():
    return sibling("harness_timing")


@pytest.fixture(scope="session")
def test_job():
    return sibling("test_job")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def job_module():
    return sibling
