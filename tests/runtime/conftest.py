"""Fixtures of the run-time tests: the job modules loaded by path, as the worker loads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.profiler import job_modules

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"

sibling = job_modules.job_module  # a library ("harness_timing") or a job ("test_job"), by path


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
