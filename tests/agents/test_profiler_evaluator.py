"""The loop's evaluator over the profiler's worker (its `test` job in a WorkerPool), on CPU torch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.optimize_loop import LoopSettings, OptimizeLoop
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.worker.child.anti_cheat import AntiCheatPolicy
from tests.agents.fake_openai import FakeOpenAI, reply
from tests.agents.kernelbench_cpu import FAST, REFERENCE, START, WRONG, fenced

KEY = "sk-pool-SECRET-777"


@pytest.fixture
def evaluator(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("POOL_TEST_KEY", KEY)
    e = ProfilerEvaluator(
        REFERENCE, ProfilerEvaluatorSettings(device="cpu", timeout_s=60, secret_env=("POOL_TEST_KEY",))
    )
    yield e
    e.close()


def test_outcomes_through_the_profiler_worker(evaluator: ProfilerEvaluator) -> None:
    good = evaluator.evaluate(FAST)
    assert good.correct and good.correctness.passed_trials == 5 and good.speedup is not None
    wrong = evaluator.evaluate(WRONG)
    assert wrong.correctness.status == "failed" and "trial 1/5" in wrong.correctness.message
    broken = evaluator.evaluate(FAST.replace("return x.sum(dim=1)", "return x.sum(dim=1"))
    assert not broken.compile.ok and "SyntaxError" in broken.compile.log


def test_escaping_candidate_in_the_pool(evaluator: ProfilerEvaluator, tmp_path: Path) -> None:
    leak = tmp_path / "leak.txt"
    sneaky = (
        FAST
        + f"\nimport os, pathlib\npathlib.Path({str(leak)!r}).write_text(os.environ.get('POOL_TEST_KEY') or 'absent')\n"
    )
    assert evaluator.evaluate(sneaky).correct
    assert leak.read_text() == "absent"
    evaluator.settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=5, secret_env=("POOL_TEST_KEY",))
    hang = evaluator.evaluate(FAST + "\nwhile True:\n    pass\n")
    assert hang.correctness.status == "timeout"
    # a fresh worker replaced the killed one (its torch import is not the 5 s hang test's: under load it took more)
    evaluator.settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=60, secret_env=("POOL_TEST_KEY",))
    assert evaluator.evaluate(FAST).correct


def test_loop_over_the_profiler_worker(evaluator: ProfilerEvaluator, tmp_path: Path) -> None:
    with FakeOpenAI([reply(fenced(WRONG)), reply(fenced(FAST))]) as fake:
        coder = CoderClient(CoderSettings(base_url=fake.base_url, api_key_env="POOL_TEST_KEY"))
        loop = OptimizeLoop(
            evaluator,
            coder,
            REFERENCE,
            kernel="row_sum",
            run_root=tmp_path,
            settings=LoopSettings(rounds=2, anti_cheat=AntiCheatPolicy(False, True)),
        )
        result = loop.run(START)
    assert [r.kind for r in result.rounds] == ["initial", "optimize", "repair"]
    assert [r.evaluation.correct for r in result.rounds] == [True, False, True]
    assert "This candidate is wrong" in fake.requests[1].prompt


def test_profile_becomes_the_judges_metrics_with_line_evidence() -> None:
    from cudalens.agents.evaluation import CorrectnessOutcome
    from cudalens.agents.judge import JudgeInput, judge
    from cudalens.agents.judge.metrics import derive
    from cudalens.agents.profiler_evaluator import profile_metrics
    from cudalens.worker.child.results import KernelMetrics, LineCounters, NcuProfile

    kernel = KernelMetrics(
        "transpose_naive(const float *, float *, int, int)",
        0,
        {
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 81.0,
            "sm__throughput.avg.pct_of_peak_sustained_elapsed": 20.0,
            "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct": 55.0,
        },
    )
    lines = (
        LineCounters(
            "candidate.py",
            26,
            "transpose_naive",
            inst_executed=100,
            thread_inst_executed=3200,
            global_requests=1000,
            global_sectors=32000,
            global_sectors_ideal=4000,
        ),
        LineCounters(
            "candidate.py",
            27,
            "transpose_naive",
            inst_executed=100,
            thread_inst_executed=3200,
            global_requests=1000,
            global_sectors=4000,
            global_sectors_ideal=4000,
        ),
    )
    (p,) = profile_metrics(NcuProfile((kernel,), lines, "csv"))
    assert p.kernel == "transpose_naive"
    assert derive(p).sectors_per_request == 18.0
    v = judge(JudgeInput("transpose_naive", correctness=CorrectnessOutcome("passed", 5, 5), metrics=p))
    assert (v.bottleneck, v.method) == ("memory", "coalesce-global-access") and v.evidence[0].line == 26


def test_profile_step_says_why_it_has_nothing_without_the_key_in_its_note(
    evaluator: ProfilerEvaluator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudalens.agents.evaluation import CompileOutcome, CorrectnessOutcome, Evaluation

    monkeypatch.setenv("CUDALENS_NCU", str(tmp_path / "no-ncu-here"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    (tmp_path / "c.py").write_text(FAST)
    (tmp_path / "r.py").write_text(REFERENCE)
    passed = Evaluation("h", CompileOutcome(True), CorrectnessOutcome("passed", 5, 5))
    noted = evaluator.add_profile(passed, tmp_path / "c.py", tmp_path / "r.py")
    assert noted.profiles == () and len(noted.notes) == 1 and "ncu" in noted.notes[0]
    assert KEY not in noted.notes[0]


def test_worker_that_cannot_start_is_a_crash(tmp_path: Path) -> None:
    e = ProfilerEvaluator(REFERENCE, ProfilerEvaluatorSettings(python=str(tmp_path / "no-python")))
    try:
        result = e.evaluate(FAST)
    finally:
        e.close()
    assert result.correctness.status == "crashed" and "cannot start the worker" in result.correctness.message


def test_the_profiled_target_gets_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ncu's target (the candidate's code) starts with: the Coder's key and anything named like a
    credential are gone, whichever environment the file needs (with or without -lineinfo)."""
    from cudalens.profiler.child_env import clean_env
    from cudalens.profiler.ncu.profile import target_env

    monkeypatch.setenv("POOL_TEST_KEY", KEY)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "t0k3n")
    for text in ("load_inline(..., extra_cuda_cflags=['-lineinfo'])", "load_inline(...)"):
        env = clean_env(target_env(str(tmp_path / "c.py"), text))
        assert "POOL_TEST_KEY" not in env and "SOME_SERVICE_TOKEN" not in env
        assert KEY not in "".join(env.values()) and env.get("PATH") == os.environ["PATH"]


def test_a_candidate_that_replaces_a_clock_fails_and_its_worker_is_retired(evaluator: ProfilerEvaluator) -> None:
    # replaced from inside forward, through names the static anti-cheat check cannot read: only the run finds it
    cheat = FAST.replace(
        "return x.sum(dim=1)",
        "m = __import__('ti' + 'me')\n        setattr(m, 'perf_' + 'counter', lambda: 0.0)\n        return x.sum(dim=1)",
    )
    assert cheat != FAST
    caught = evaluator.evaluate(cheat)
    assert caught.correctness.status == "failed" and caught.timing is None
    assert "time.perf_counter" in caught.correctness.message and "timing manipulation" in caught.correctness.message
    after = evaluator.evaluate(FAST)  # a fresh worker, its clocks as torch made them
    assert after.correct and after.speedup is not None


def test_an_isolated_evaluator_gives_each_candidate_a_fresh_worker(tmp_path: Path) -> None:
    evaluator = ProfilerEvaluator(
        REFERENCE, ProfilerEvaluatorSettings(device="cpu", timeout_s=60, fresh_worker=True)
    )
    pids = tmp_path / "pids.txt"
    noting = FAST + f"\nimport os\nwith open({str(pids)!r}, 'a') as f:\n    f.write(f'{{os.getpid()}} {{os.getcwd()}}\\n')\n"
    try:
        assert evaluator.evaluate(noting).correct and evaluator.evaluate(noting).correct
    finally:
        evaluator.close()
    seen = [line.split() for line in pids.read_text().splitlines()]
    # each candidate in a new process and scratch folder (a speedup above 10× adds a re-run in a fresh process,
    # profiler/reverify.py, in the same scratch folder)
    assert len({pid for pid, _ in seen}) == len(seen) and len({cwd for _, cwd in seen}) == 2
    assert not any(Path(cwd).exists() for _, cwd in seen)  # all deleted with their workers
