"""The loop on a real GPU with load_inline candidates: wrong, slow, fast → ends on the fast one."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.optimize_loop import LoopSettings, OptimizeLoop
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from tests.agents.fake_openai import FakeOpenAI, reply
from tests.agents.kernelbench_cpu import fenced

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "optimize_problems.py"


def _problems():
    spec = importlib.util.spec_from_file_location("optimize_problems", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["optimize_problems"] = module
    spec.loader.exec_module(module)
    return module


def _relu():
    """The ReLU problem of benchmarks/optimize_problems.py, on a CUDA device (else the test skips)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")
    op = _problems()
    return op, op.PROBLEMS[0]


def _relu_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replies: list[str], settings: LoopSettings,
               evaluator_settings: ProfilerEvaluatorSettings):
    """The loop on the ReLU problem with a Coder that replays `replies` (candidate sources), from its start."""
    op, problem = _relu()
    monkeypatch.setenv("GPU_TEST_KEY", "sk-gpu-test")
    script = [reply(fenced(source)) for source in replies]
    evaluator = ProfilerEvaluator(op.reference_file(problem), evaluator_settings)
    with FakeOpenAI(script) as fake:
        loop = OptimizeLoop(
            evaluator,
            CoderClient(CoderSettings(base_url=fake.base_url, model="m", api_key_env="GPU_TEST_KEY")),
            op.reference_file(problem),
            kernel="relu_kernel",
            settings=settings,
            run_root=tmp_path / "runs",
        )
        try:
            return loop.run(problem.start)
        finally:
            evaluator.close()


@pytest.mark.gpu
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("evaluator_kind", ["isolated", "profiler"])
def test_relu_loop_ends_on_the_fast_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, evaluator_kind: str
) -> None:
    _, problem = _relu()
    result = _relu_loop(
        tmp_path, monkeypatch, [problem.wrong, problem.slow, problem.fast], LoopSettings(rounds=3, patience=5),
        ProfilerEvaluatorSettings(timeout_s=600, fresh_worker=evaluator_kind == "isolated"),
    )
    assert [r.evaluation.correct for r in result.rounds] == [True, False, True, True]
    assert result.best_round == 3 and result.best_source == problem.fast and result.best_speedup > 0


@pytest.mark.gpu
@pytest.mark.timeout(1200)
def test_a_wide_search_profiles_a_candidate_when_it_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beam of 2, three requests: round 0 is profiled in its own job (it is always expanded), the two children of
    the first wave are timed without ncu, and the one the third request expands is profiled before the Coder is
    asked about it; a leaf never expanded keeps no profile."""
    _, problem = _relu()
    # the first wave: slow and fast (in either order), then one more from the faster of them
    result = _relu_loop(
        tmp_path, monkeypatch, [problem.slow, problem.fast, problem.wrong],
        LoopSettings(rounds=3, patience=5, search="beam", width=2), ProfilerEvaluatorSettings(timeout_s=600),
    )
    rounds = {r.index: r for r in result.rounds}
    assert rounds[0].evaluation.profiles and "ncu" in dict(rounds[0].evaluation.stages)
    expanded = {r.parent for r in result.rounds if r.index > 2}
    children = [rounds[1], rounds[2]]
    assert all(r.evaluation.correct for r in children)
    for r in children:
        stages = dict(r.evaluation.stages)
        assert "ncu" not in stages
        if r.index in expanded:
            assert r.evaluation.profiles and "expansion: ncu" in stages
            assert r.verdict is not None and r.verdict.status == "measured" and r.verdict.roofline
        else:
            assert not r.evaluation.profiles


@pytest.mark.gpu
@pytest.mark.timeout(1200)
def test_a_search_that_profiles_ahead_profiles_each_candidate_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LoopSettings.profile_ahead: a correct candidate is profiled while the GPU is idle, or when first expanded,
    never both; the one the third request expands has its profile (made ahead or for it) before the Coder is asked."""
    _, problem = _relu()
    result = _relu_loop(
        tmp_path, monkeypatch, [problem.slow, problem.fast, problem.wrong],
        LoopSettings(rounds=3, patience=5, search="beam", width=2, profile_ahead=True),
        ProfilerEvaluatorSettings(timeout_s=600),
    )
    rounds = {r.index: r for r in result.rounds}
    for r in (rounds[1], rounds[2]):
        stages = dict(r.evaluation.stages)
        assert not ("ahead: ncu" in stages and "expansion: ncu" in stages), stages
        if r.index in {n.parent for n in result.rounds if n.index > 2}:
            assert r.evaluation.profiles and ("ahead: ncu" in stages or "expansion: ncu" in stages), stages


@pytest.mark.gpu
@pytest.mark.timeout(900)
def test_a_profiled_round_warms_a_spare_ncu_target_before_its_build(tmp_path: Path) -> None:
    """From the second round on, the evaluator starts the next round's ncu target when a round begins (as a save
    does), not when its profile ends: the one left after round 2 was started before round 2's profile."""
    import shutil

    from cudalens.profiler.ncu import standby

    op, problem = _relu()
    if shutil.which("ncu") is None:
        pytest.skip("needs ncu")
    evaluator = ProfilerEvaluator(op.reference_file(problem), ProfilerEvaluatorSettings(timeout_s=600))
    try:
        assert evaluator.evaluate(problem.slow).profiles
        second = evaluator.evaluate(problem.fast)
        profiled_for = dict(second.stages)["ncu"]
        mine = [s for queue in standby._STANDBYS.values() for s in queue if s.owner == evaluator._standby_owner]
        assert second.profiles and len(mine) == 1
        assert _age(mine[0].proc.pid) > profiled_for
    finally:
        evaluator.close()


def _age(pid: int) -> float:
    """Seconds since a process started, from the kernel's record (a folder's ctime moves as files appear in it)."""
    import os

    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])  # field 22, starttime
    return float(Path("/proc/uptime").read_text().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
