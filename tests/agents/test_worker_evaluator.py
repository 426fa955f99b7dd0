"""Candidates run in a child process group with a timeout and without secrets in their environment."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cudalens.agents.worker_evaluator import WorkerEvaluator, WorkerSettings
from tests.agents.kernelbench_cpu import FAST, REFERENCE, WRONG

KEY = "sk-worker-SECRET-42424242"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_escaping_candidate_stays_inside_the_worker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OTHER_SERVICE_TOKEN", KEY)
    pid_file = tmp_path / "grandchild.pid"
    home = Path.home()
    escape = (
        FAST
        + f"""
import os, pathlib, subprocess
leaked = os.environ.get("OPENAI_API_KEY") or os.environ.get("OTHER_SERVICE_TOKEN") or "absent"
print("KEY=" + leaked, flush=True)
pathlib.Path(os.path.expanduser("~/cudalens-escape.txt")).write_text(leaked)
pathlib.Path("cudalens-escape.txt").write_text(leaked)
child = subprocess.Popen(["sleep", "600"])
pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))
while True:
    pass
"""
    )
    evaluator = WorkerEvaluator(REFERENCE, WorkerSettings(timeout_s=25, build_root=str(tmp_path / "b")))
    result = evaluator.evaluate(escape)
    assert result.correctness.status == "timeout" and "limit" in result.correctness.message
    assert any("KEY=absent" in note for note in result.notes)
    assert all(KEY not in note for note in result.notes)
    assert not (home / "cudalens-escape.txt").exists() and not (Path.cwd() / "cudalens-escape.txt").exists()
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(grandchild), "the candidate's own child outlived the worker's process group"


def test_correct_wrong_and_broken_candidates(tmp_path: Path) -> None:
    evaluator = WorkerEvaluator(
        REFERENCE, WorkerSettings(timeout_s=60, time_budget_ms=50, build_root=str(tmp_path / "b"))
    )
    good = evaluator.evaluate(FAST)
    assert good.correct and good.correctness.passed_trials == 5 and good.speedup is not None
    assert len(good.timing.candidate.samples_ms) >= 5

    wrong = evaluator.evaluate(WRONG)
    assert wrong.correctness.status == "failed" and "mismatch" in wrong.correctness.message

    broken = evaluator.evaluate(FAST.replace("return x.sum(dim=1)", "return x.sum(dim=1"))
    assert not broken.compile.ok and "SyntaxError" in broken.compile.log

    crash = evaluator.evaluate(FAST.replace("return x.sum(dim=1)", "return x.view(7, -1, 3)"))
    assert crash.correctness.status == "crashed" and "RuntimeError" in crash.correctness.message

    same = evaluator.evaluate(FAST.replace("return x.sum(dim=1)", "return x"))
    assert same.correctness.status == "failed"


def test_patched_timer_is_caught_at_run_time(tmp_path: Path) -> None:
    patched = FAST + "\nimport time\ntime.perf_counter = lambda: 0.0\n"
    result = WorkerEvaluator(REFERENCE, WorkerSettings(timeout_s=60, build_root=str(tmp_path))).evaluate(
        patched
    )
    assert result.correctness.status == "failed" and "time.perf_counter" in result.correctness.message


def test_secrets_are_scrubbed_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from cudalens.agents.worker_evaluator import scrubbed_environment

    monkeypatch.setenv("MY_CODER_KEY", "x")
    monkeypatch.setenv("HF_TOKEN", "y")
    env = scrubbed_environment(("MY_CODER_KEY",), "/tmp/h")
    assert "MY_CODER_KEY" not in env and "HF_TOKEN" not in env and env["HOME"] == "/tmp/h"
    assert env["PATH"] == os.environ["PATH"]


def test_light_torch_header_for_load_inline_cuda_sources() -> None:
    from cudalens.agents import candidate_runner as cr

    src = "#include <torch/extension.h>\n__global__ void k() {}\ntorch::Tensor f(torch::Tensor x) { return x; }\n"
    assert cr._light_cuda_sources(src).startswith("#include <torch/types.h>\n")
    assert cr._light_cuda_sources([src])[0].startswith("#include <torch/types.h>")
    assert cr._light_cuda_sources(src + "PYBIND11_MODULE(m, m) {}") is None  # bindings need the full header
    assert cr._light_cuda_sources("__global__ void k() {}") is None
    needs_full = 'cuda.cu(12): error: namespace "torch::nn" has no member "functional"'
    assert cr._TORCH_NAME_ERROR.search(needs_full)
    assert not cr._TORCH_NAME_ERROR.search('cuda.cu(3): error: identifier "blockDimx" is undefined')
    assert not cr._TORCH_NAME_ERROR.search('cuda.cu(3): error: identifier "data" is undefined')
    assert cr._TORCH_NAME_ERROR.search("main.cu:4:3: error: 'nn' is not a member of 'torch'")


def test_worker_that_cannot_start_is_a_crash_with_the_reason(tmp_path: Path) -> None:
    settings = WorkerSettings(python=str(tmp_path / "no-python"), build_root=str(tmp_path))
    result = WorkerEvaluator(REFERENCE, settings).evaluate(FAST)
    assert result.correctness.status == "crashed" and "cannot start the worker" in result.correctness.message
