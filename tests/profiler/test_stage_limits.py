"""A job's progress can set how long it may run from then on (`Progress.limit_s`): the test job uses it to kill
a hung candidate after a limit derived from the reference's time instead of the job's 600 s."""

from __future__ import annotations

import time

import pytest

from cudalens.worker.child.protocol import JobRequest
from cudalens.worker.pool import WorkerPool


@pytest.fixture
def pool():
    p = WorkerPool()
    yield p
    p.close()


def sleeper(limit_s: float | None, timeout_s: float, seconds: float = 30.0) -> JobRequest:
    payload = {"action": "sleep", "seconds": seconds, "progress": True, "limit_s": limit_s}
    return JobRequest("j1", "echo", payload, timeout_s)


def test_a_stage_limit_kills_the_job_and_says_which_stage(pool):
    began = time.monotonic()
    result = pool.run(sleeper(1.0, 60.0))
    assert result.status == "timeout"
    assert time.monotonic() - began < 15
    assert result.error.splitlines()[0] == "echoing: killed after 1 s"


def test_a_stage_limit_never_extends_the_jobs_own_timeout(pool):
    began = time.monotonic()
    result = pool.run(sleeper(600.0, 2.0))
    assert result.status == "timeout" and time.monotonic() - began < 15
    assert "its timeout of 2 s" in result.error


def test_a_job_within_its_stage_limit_finishes(pool):
    assert pool.run(sleeper(20.0, 60.0, seconds=0.2)).status == "ok"
