"""A search's builds ahead in warm workers (profiler/prebuild.py `BuildWorkers`, worker/child/jobs/build_ahead_job.py):
torch imported once per worker, each candidate built in a child forked from it, so nothing one candidate does
reaches the next and a cancel leaves no process behind."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from cudalens.profiler import processes
from cudalens.profiler.prebuild import BuildWorkers

CANDIDATE = '''import os
import time
import torch
import torch.nn as nn

with open({pids!r}, "a") as f:
    f.write(f"{{os.getpid()}}\\n")
if hasattr(torch, "cudalens_leaked"):
    raise RuntimeError("state left by an earlier candidate")
torch.cudalens_leaked = True
{extra}

class Model(nn.Module):
    def forward(self, x):
        return x

class ModelNew(Model):
    pass

def get_inputs():
    raise RuntimeError("inputs were made")

def get_init_inputs():
    return []
'''


def _candidate(tmp_path: Path, extra: str = "") -> str:
    return CANDIDATE.format(pids=str(tmp_path / "pids"), extra=extra)


def _pids(tmp_path: Path) -> list[int]:
    return [int(p) for p in (tmp_path / "pids").read_text().split()]


def test_each_candidate_builds_in_a_fork_of_one_warm_worker(tmp_path):
    builders = BuildWorkers(1, timeout=120)
    try:
        first = builders.build_source(_candidate(tmp_path))
        worker = builders.pools[0].handshake.pid
        second = builders.build_source(_candidate(tmp_path, "x = 1"))
        assert builders.pools[0].handshake.pid == worker  # the same warm worker, torch imported once
    finally:
        builders.close()
    # both built (no inputs made: a build ahead puts nothing on the GPU), neither saw the other's state
    assert first.ok and second.ok, (first.message, second.message)
    forks = _pids(tmp_path)
    assert len(forks) == 2 and len(set(forks)) == 2 and worker not in forks


def test_a_failing_candidate_is_one_line_and_the_worker_builds_on(tmp_path):
    builders = BuildWorkers(1, timeout=120)
    try:
        failed = builders.build_source(_candidate(tmp_path, "raise ValueError('no such kernel')"))
        after = builders.build_source(_candidate(tmp_path, "y = 2"))
    finally:
        builders.close()
    assert not failed.ok and failed.message == "cudalens profile target: ValueError: no such kernel"
    assert after.ok, after.message


def test_a_cancel_kills_the_build_in_flight_and_leaves_no_process(tmp_path):
    builders = BuildWorkers(1, timeout=120)
    cancel = processes.CancelToken()
    try:
        builders.pools[0].start()  # warm before the clock starts
        threading.Timer(1.5, cancel.cancel).start()
        began = time.monotonic()
        with pytest.raises(processes.Cancelled):
            builders.build_source(_candidate(tmp_path, "time.sleep(60)"), cancel)
        assert time.monotonic() - began < 20
        [fork] = _pids(tmp_path)
        deadline = time.monotonic() + 5
        while _alive(fork) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(fork)
        (tmp_path / "pids").unlink()
        again = builders.build_source(_candidate(tmp_path))  # a fresh worker takes the killed one's place
        assert again.ok, again.message
    finally:
        builders.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.gpu
@pytest.mark.timeout(600)
def test_a_candidate_built_ahead_is_found_built_under_its_gpu_lease(tmp_path):
    """The fork builds with the flags the evaluator's worker uses (torch asks the device for its architecture in
    both): the evaluation loads the module built ahead and compiles nothing."""
    import sys
    import uuid

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from search_standin import FAMILIES

    from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings

    family = FAMILIES["19_ReLU"]
    marker = f"// built ahead {uuid.uuid4().hex}\n"  # a kernel no cache holds yet
    source = family.source({"block": 256, "vec": 4, "items": 2}).replace("__global__", marker + "__global__", 1)
    builders = BuildWorkers(1, timeout=300)
    try:
        ahead = builders.build_source(source)
    finally:
        builders.close()
    assert ahead.ok, ahead.message
    evaluator = ProfilerEvaluator(family.reference, ProfilerEvaluatorSettings(timeout_s=300, profile=False))
    try:
        evaluation = evaluator.evaluate(source, "time")
    finally:
        evaluator.close()
    assert evaluation.correct, evaluation.correctness.message
    fast = [b for b in evaluation.builds if b.startswith("fast ")]
    assert fast and not any(" in " in b for b in fast), evaluation.builds  # " in T s": built under the lease
