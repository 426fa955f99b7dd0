"""The optimize loop end to end on CPU: real worker subprocesses, a real local OpenAI-compatible server."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.optimize_loop import LoopProgress, LoopSettings, OptimizeLoop
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.worker.child.anti_cheat import AntiCheatPolicy
from tests.agents.fake_openai import FakeOpenAI, error, reply
from tests.agents.kernelbench_cpu import FAST, REFERENCE, SLOW, START, WRONG, fenced

KEY = "sk-loop-SECRET-abcdef987654"
CPU_POLICY = AntiCheatPolicy(require_custom_kernel=False, allow_torch_compute=True)


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CUDALENS_LOOP_KEY", KEY)
    return "CUDALENS_LOOP_KEY"


def _loop(
    fake: FakeOpenAI,
    key_env: str,
    tmp_path: Path,
    *,
    stream: bool = False,
    price: float = 0.001,
    cancel: threading.Event | None = None,
    on_progress=None,
    timeout_s: float = 120,
    **loop_kw,
) -> OptimizeLoop:
    coder = CoderClient(
        CoderSettings(
            base_url=fake.base_url,
            model="fake",
            api_key_env=key_env,
            stream=stream,
            price_in_per_1k=price,
            price_out_per_1k=price,
        ),
        backoff_s=0.01,
    )
    evaluator = ProfilerEvaluator(
        REFERENCE,
        ProfilerEvaluatorSettings(device="cpu", timeout_s=timeout_s, budget_ms=100, secret_env=(key_env,)),
    )
    settings = LoopSettings(anti_cheat=CPU_POLICY, **loop_kw)
    return OptimizeLoop(
        evaluator,
        coder,
        REFERENCE,
        kernel="row_sum",
        settings=settings,
        cancel=cancel,
        on_progress=on_progress,
        run_root=tmp_path / ".cudalens" / "runs",
    )


def test_repair_then_optimize_keeps_the_fastest_correct_candidate(key_env: str, tmp_path: Path) -> None:
    progress: list[LoopProgress] = []
    script = [reply(fenced(WRONG)), reply(fenced(SLOW, "Fixed the scale.")), reply(fenced(FAST))]
    with FakeOpenAI(script) as fake:
        result = _loop(fake, key_env, tmp_path, stream=True, rounds=3, on_progress=progress.append).run(START)

    kinds = [r.kind for r in result.rounds]
    assert kinds == ["initial", "optimize", "repair", "optimize"]
    status = [(r.evaluation.correct if r.evaluation else None) for r in result.rounds]
    assert status == [True, False, True, True]
    assert result.best_round == 3 and result.best_source == FAST and result.best_speedup > 2
    assert result.rounds[2].speedup is not None and result.rounds[2].speedup < result.best_speedup  # not kept
    assert result.stop_reason == "rounds" and result.improved

    optimize, repair, optimize2 = (r.prompt for r in fake.requests)
    for prompt in (optimize, repair, optimize2):
        assert "class Model(nn.Module)" in prompt and "H200" in prompt and "ridge point" in prompt
    assert "Make this kernel faster" in optimize and START.split("class ModelNew")[1] in optimize
    assert "Judge" in optimize and "Next step" in optimize
    assert "This candidate is wrong" in repair and "differ beyond" in repair and "* 1.01" in repair
    assert "Make this kernel faster" in optimize2 and "for _ in range(5)" in optimize2

    assert progress[0].round == 0 and progress[-1].phase == "done"
    assert progress[-1].best_speedup == result.best_speedup
    assert result.usage.requests == 3 and result.usage.total_tokens == 4500

    run = result.run_dir
    assert run is not None and run.parent == tmp_path / ".cudalens" / "runs" and run.name.endswith("-row_sum")
    for k in range(4):
        assert (run / f"round-{k:02d}" / "source.py").is_file()
        assert (run / f"round-{k:02d}" / "verdict.md").is_file()
    assert (run / "round-01" / "reply.md").read_text().startswith("Here is the new version.")
    assert (run / "best.py").read_text() == FAST
    summary = (run / "summary.md").read_text()
    assert "| 3 | optimize | correct |" in summary and "Wrong result" in summary
    for f in run.rglob("*"):
        if f.is_file():
            assert KEY not in f.read_text(), f


def test_budget_stops_the_loop(key_env: str, tmp_path: Path) -> None:
    no_model_new = REFERENCE  # nothing to evaluate in round 0: the Coder writes the first ModelNew
    with FakeOpenAI([reply("Let me think about it.")] * 4) as fake:
        result = _loop(fake, key_env, tmp_path, price=1.0, budget_usd=0.5, rounds=5).run(no_model_new)
    assert result.stop_reason == "budget" and len(fake.requests) == 1
    assert result.usage.cost_usd == pytest.approx(1.5) and result.best_source is None


def test_reply_without_code_is_asked_again_then_no_progress(key_env: str, tmp_path: Path) -> None:
    with FakeOpenAI([reply("I believe it is optimal already.")] * 6) as fake:
        result = _loop(fake, key_env, tmp_path, rounds=5, patience=2).run(REFERENCE)
    assert result.stop_reason == "no-progress" and len(fake.requests) == 4
    assert "Write a CUDA implementation" in fake.requests[0].prompt
    assert "contained no code" in fake.requests[1].prompt
    assert all("no ModelNew file" in r.error for r in result.rounds[1:])


def test_cancel_kills_the_candidate_in_flight(key_env: str, tmp_path: Path) -> None:
    cancel = threading.Event()

    def on_progress(p: LoopProgress) -> None:
        if p.phase == "evaluating" and p.round == 1:
            threading.Timer(1.0, cancel.set).start()

    hang = FAST + "\nwhile True:  # never finishes importing\n    pass\n"
    with FakeOpenAI([reply(fenced(hang))]) as fake:
        result = _loop(fake, key_env, tmp_path, rounds=3, cancel=cancel, on_progress=on_progress).run(
            REFERENCE
        )
    assert result.stop_reason == "cancelled"
    assert result.rounds[-1].evaluation.correctness.status in ("crashed", "timeout")


def test_coder_failure_stops_with_its_message_and_no_key(key_env: str, tmp_path: Path) -> None:
    with FakeOpenAI([error(401, f"Incorrect API key provided: {KEY}")]) as fake:
        result = _loop(fake, key_env, tmp_path, rounds=3).run(REFERENCE)
    assert result.stop_reason == "coder-error" and "401" in result.rounds[-1].error
    assert KEY not in result.rounds[-1].error
    assert KEY not in (result.run_dir / "summary.json").read_text()


def test_cheating_candidate_is_rejected_before_it_runs(key_env: str, tmp_path: Path) -> None:
    cheat = (
        REFERENCE + "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n"
        "            return x.sum(dim=1)\n        except Exception:\n            return Model()(x)\n"
    )
    with FakeOpenAI([reply(fenced(cheat))]) as fake:
        result = _loop(fake, key_env, tmp_path, rounds=1).run(REFERENCE)
    r = result.rounds[-1]
    assert r.evaluation is None and r.verdict.status == "failing" and "try/except" in r.verdict.critical_issue
    assert result.best_source is None


def test_fix_with_coder_stops_at_the_first_correct_candidate(key_env: str, tmp_path: Path) -> None:
    with FakeOpenAI([reply(fenced(FAST)), reply(fenced(SLOW))]) as fake:
        result = _loop(fake, key_env, tmp_path, rounds=5, repair_only=True).run(WRONG)
    assert [r.kind for r in result.rounds] == ["initial", "repair"] and len(fake.requests) == 1
    assert "This candidate is wrong" in fake.requests[0].prompt
    assert result.stop_reason == "repaired" and result.best_source == FAST and result.improved


def test_no_progress_after_patience_rounds_without_a_better_candidate(key_env: str, tmp_path: Path) -> None:
    with FakeOpenAI([reply(fenced(SLOW))] * 5) as fake:
        result = _loop(fake, key_env, tmp_path, rounds=5, patience=2).run(START)
    assert result.stop_reason == "no-progress" and len(fake.requests) == 2
    assert result.best_round == 0 and not result.improved


async def test_async_run_is_cancelled_with_its_task(key_env: str, tmp_path: Path) -> None:
    import asyncio

    from cudalens.agents.gpu_specs import DEFAULT_GPU
    from cudalens.agents.optimize_run import OptimizeRun, OptimizeSpec

    started = threading.Event()

    def on_progress(p: LoopProgress) -> None:
        if p.phase == "evaluating" and p.round == 1:
            started.set()

    hang = FAST + "\nwhile True:  # never finishes importing\n    pass\n"
    with FakeOpenAI([reply(fenced(hang))]) as fake:
        spec = OptimizeSpec(
            str(tmp_path / "row_sum.py"),
            REFERENCE,
            "row_sum",
            CoderSettings(base_url=fake.base_url, model="fake", api_key_env=key_env),
            LoopSettings(rounds=3, anti_cheat=CPU_POLICY),
            ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=100),
            gpu=DEFAULT_GPU,
            runs_dir=tmp_path / ".cudalens" / "runs",
        )
        run = OptimizeRun(spec, on_progress)
        try:
            task = asyncio.ensure_future(run.run_async())
            while not started.is_set():
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            run.close()
    assert run.loop.cancel.is_set()
    assert run.evaluators[0].settings.secret_env == ("OPENAI_API_KEY", key_env)
    summary = next((tmp_path / ".cudalens" / "runs").iterdir()) / "summary.json"
    assert '"stop_reason": "cancelled"' in summary.read_text()


def test_a_best_candidate_slower_than_the_reference_is_not_called_faster() -> None:
    # the H200's whole-model run printed "best 0.57× faster" for a softmax slower than PyTorch's
    from cudalens.agents.coder.usage import Usage
    from cudalens.agents.optimize_loop import OptimizeResult

    def line(speedup: float | None) -> str:
        return OptimizeResult("", None, 1, speedup, "rounds", [], Usage(), None).summary_line()

    assert line(0.57).startswith("best 0.57× the reference's speed (slower) (round 1)")
    assert line(1.47).startswith("best 1.47× faster")
    assert line(None).startswith("best no correct candidate")
