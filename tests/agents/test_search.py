"""The search policies over a tree of real evaluations, and the search end to end on CPU: real workers, the real
`openai` client against the local OpenAI-compatible server."""

from __future__ import annotations

import itertools
import re
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.evaluation import (
    CompileOutcome,
    CorrectnessOutcome,
    Evaluation,
)
from cudalens.agents.gpu_specs import DEFAULT_GPU
from cudalens.agents.judge.verdict import Verdict
from cudalens.agents.optimize_loop import LoopProgress, LoopSettings, OptimizeLoop, needs_profile
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.agents.search.devices import DeviceLeases, visible_gpus
from cudalens.agents.search.policies import Beam, Chain, Tree, methods_for
from cudalens.agents.search.tree import RoundRecord, SearchTree, normalised_key, render_tree
from cudalens.worker.child.anti_cheat import AntiCheatPolicy
from cudalens.worker.child.results import Measurement, TimingResult
from tests.agents.fake_openai import FakeOpenAI, Scripted, reply
from tests.agents.kernelbench_cpu import FAST, REFERENCE, SLOW, START, WRONG, fenced, model_new

KEY = "sk-search-SECRET-1234"
CPU_POLICY = AntiCheatPolicy(require_custom_kernel=False, allow_torch_compute=True)


def _node(index: int, parent: int | None, speedup: float | None, method: str = "vectorize-memory-access"):
    correct = speedup is not None
    evaluation = Evaluation(
        f"h{index}", CompileOutcome(True), CorrectnessOutcome("passed" if correct else "failed", 5, 5 * correct),
        TimingResult(Measurement("candidate", (1.0,)), Measurement("reference", (speedup or 1.0,))),
    )
    verdict = Verdict("k", "measured" if correct else "failing", "v", bottleneck="memory", method=method)
    return RoundRecord(index, "initial" if parent is None else "optimize", f"src{index}", evaluation, verdict,
                       parent=parent)


def _tree(*nodes: RoundRecord) -> SearchTree:
    tree = SearchTree()
    for n in nodes:
        tree.add(n)
    return tree


def test_chain_expands_the_last_candidate_one_at_a_time() -> None:
    tree = _tree(_node(0, None, 1.0), _node(1, 0, None), _node(2, 0, 1.5))
    (e,) = Chain().select(tree, 4)
    assert (e.parent, e.kind, e.method) == (2, "optimize", None)
    tree.pending[3] = e
    assert Chain().select(tree, 4) == []  # sequential: nothing more while one is in flight


def test_beam_keeps_the_best_correct_and_asks_each_for_different_methods() -> None:
    tree = _tree(_node(0, None, 1.0), _node(1, 0, 2.0), _node(2, 0, 1.5), _node(3, 0, None))
    picks = Beam(2).select(tree, 4)
    assert {e.parent for e in picks} == {1, 2} and all(e.kind == "optimize" for e in picks)
    for parent in (1, 2):
        methods = [e.method for e in picks if e.parent == parent]
        assert len(methods) == 2 and len(set(methods)) == 2  # different methods from one node
        assert methods[0] == "vectorize-memory-access"  # the Judge's own method first
    assert methods_for(tree.nodes[1].verdict)[:3] == [
        "vectorize-memory-access", "coalesce-global-access", "tile-in-shared-memory"]


def test_beam_repairs_while_nothing_is_correct() -> None:
    tree = _tree(_node(0, None, None), _node(1, 0, None), _node(2, 0, None))
    picks = Beam(2).select(tree, 2)
    assert {(e.parent, e.kind) for e in picks} == {(1, "repair"), (2, "repair")}  # the latest failures


def test_tree_prefers_the_fast_subtree_and_spreads_concurrent_picks() -> None:
    tree = _tree(_node(0, None, 1.0), _node(1, 0, 3.0), _node(2, 0, None), _node(3, 1, 3.2), _node(4, 2, None))
    picks = Tree(4).select(tree, 4)
    assert picks[0].parent in (1, 3)  # the fast branch first
    assert len({(e.parent, e.method) for e in picks}) == 4  # virtual loss: no request chosen twice
    assert len({e.parent for e in picks}) >= 2


def test_a_correct_gpu_candidate_without_a_profile_is_profiled_when_expanded() -> None:
    gpu = _node(1, 0, 2.0)
    gpu = replace(gpu, evaluation=replace(gpu.evaluation, device="cuda:0"))
    assert needs_profile(gpu)
    assert not needs_profile(replace(gpu, evaluation=replace(gpu.evaluation, notes=("ncu: not installed",))))
    assert not needs_profile(_node(2, 0, 2.0))  # on the CPU there is nothing to profile
    failing = _node(3, 0, None)
    assert not needs_profile(replace(failing, evaluation=replace(failing.evaluation, device="cuda:0")))


def test_normalised_sources_and_the_rendered_tree() -> None:
    assert normalised_key("a = 1\n\n# why\nb = 2   \n") == normalised_key("a = 1\nb = 2\n")
    assert normalised_key("a = 1\n") != normalised_key("a = 2\n")
    nodes = [_node(0, None, 1.0), _node(1, 0, 2.0), _node(2, 0, None), _node(3, 1, 2.5)]
    text = render_tree(nodes, best=3)
    assert text.splitlines() == [
        "#0 initial: correct 1.00×",
        "├─ #1 optimize: correct 2.00×",
        "│  └─ #3 optimize: correct 2.50× ★",
        "└─ #2 optimize: failed",
    ]


# -- end to end on CPU -------------------------------------------------------------------------------------
@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CUDALENS_SEARCH_KEY", KEY)
    return "CUDALENS_SEARCH_KEY"


def _search(fake: FakeOpenAI, key_env: str, tmp_path: Path, evaluator=None, on_progress=None,
            **loop_kw) -> OptimizeLoop:
    coder = CoderClient(CoderSettings(base_url=fake.base_url, model="fake", api_key_env=key_env), backoff_s=0.01)
    evaluator = evaluator or ProfilerEvaluator(
        REFERENCE, ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=50, secret_env=(key_env,)))
    return OptimizeLoop(evaluator, coder, REFERENCE, kernel="row_sum", settings=LoopSettings(anti_cheat=CPU_POLICY,
                        **loop_kw), on_progress=on_progress,
                        run_root=tmp_path / ".cudalens" / "runs")


def _current(body: dict) -> str:
    prompt = "\n".join(m.get("content", "") for m in body["messages"])
    found = re.search(r"## Current candidate[^\n]*\n```python\n(.*?)```", prompt, re.S)
    return found.group(1) if found else ""


def test_beam_runs_width_requests_at_once_and_evaluates_duplicates_once(key_env: str, tmp_path: Path) -> None:
    # every reply after a delay: two in flight at once arrive together; SLOW's children all answer FAST
    def respond(body: dict) -> Scripted:
        return reply(fenced(FAST if "for _ in range(5)" in _current(body) else SLOW), delay_s=1.0)

    with FakeOpenAI(responder=respond) as fake:
        result = _search(fake, key_env, tmp_path, rounds=4, search="beam", width=2, patience=10).run(START)
    arrivals = sorted(r.at for r in fake.requests)
    assert len(arrivals) == 4 and arrivals[1] - arrivals[0] < 0.9  # the first two were in flight together
    nodes = result.rounds
    assert [n.parent for n in nodes[1:3]] == [0, 0] and nodes[1].method != nodes[2].method
    duplicates = [n for n in nodes if n.duplicate_of is not None]
    assert duplicates and all(n.seconds_eval == 0.0 for n in duplicates)
    assert result.best_source == FAST and result.best_speedup > 2
    (evaluated,) = [n.index for n in nodes if n.source == FAST and n.duplicate_of is None]
    assert result.best_round == evaluated
    assert all(n.duplicate_of == evaluated for n in nodes if n.source == FAST and n.index != evaluated)
    run = result.run_dir
    assert "## Search tree (beam)" in (run / "summary.md").read_text()
    assert '"parent": 0' in (run / "round-01" / "round.json").read_text()
    assert not (run / f"round-{duplicates[0].index:02d}" / "evaluation.json").exists()
    assert "★" in result.tree() and result.tree().startswith("#0 initial: correct")


def test_tree_search_repairs_failures_and_keeps_the_best(key_env: str, tmp_path: Path) -> None:
    replies = {"wrong": fenced(WRONG), "fast": fenced(FAST)}

    def respond(body: dict) -> Scripted:
        prompt = "\n".join(m.get("content", "") for m in body["messages"])
        return reply(replies["fast" if "This candidate is wrong" in prompt else "wrong"])

    with FakeOpenAI(responder=respond) as fake:
        result = _search(fake, key_env, tmp_path, rounds=3, search="tree", width=2, patience=10).run(START)
    assert result.best_source == FAST and result.stop_reason == "rounds"
    fast = next(n for n in result.rounds if n.source == FAST)
    assert result.rounds[fast.parent].source == WRONG and fast.kind == "repair"


def test_cancel_stops_every_branch(key_env: str, tmp_path: Path) -> None:
    cancel = threading.Event()
    hangs = [model_new(f"import time\ntime.sleep({60 + i})\nreturn x.sum(dim=1)") for i in range(2)]

    def on_progress(p: LoopProgress) -> None:
        if p.phase == "evaluating" and p.round >= 1:
            threading.Timer(1.0, cancel.set).start()

    with FakeOpenAI([reply(fenced(h)) for h in hangs]) as fake:
        loop = _search(fake, key_env, tmp_path, rounds=4, search="beam", width=2, on_progress=on_progress)
        loop.cancel = cancel
        result = loop.run(START)
    assert result.stop_reason == "cancelled" and len(fake.requests) == 2
    evaluated = [n for n in result.rounds[1:] if n.evaluation is not None]
    assert all(n.evaluation.correctness.status in ("crashed", "timeout") for n in evaluated)
    assert result.best_round == 0


class _Timed:
    """A real evaluator, and when each evaluation under it began and ended."""

    def __init__(self, inner: ProfilerEvaluator) -> None:
        self.inner, self.spans = inner, []

    def evaluate(self, source, kind="full"):
        start = time.monotonic()
        try:
            return self.inner.evaluate(source, kind)
        finally:
            self.spans.append((start, time.monotonic()))

    def cancel(self) -> None:
        self.inner.cancel()

    def close(self) -> None:
        self.inner.close()


def test_one_evaluation_per_device_at_a_time_scheduled_by_free_device(key_env: str, tmp_path: Path) -> None:
    settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=50, secret_env=(key_env,))
    timed = [_Timed(ProfilerEvaluator(REFERENCE, settings)) for _ in range(2)]
    leases = DeviceLeases(timed, ["cpu0", "cpu1"])
    variants = [model_new(f"return x.sum(dim=1) + {i} * 0.0") for i in range(6)]
    with FakeOpenAI([reply(fenced(v)) for v in variants]) as fake:
        try:
            result = _search(fake, key_env, tmp_path, leases, rounds=6, search="tree", width=3,
                             patience=10).run(START)
        finally:
            leases.close()
    assert len([n for n in result.rounds if n.evaluation is not None]) == 7
    assert {n.device for n in result.rounds} == {"cpu0", "cpu1"}  # both devices used
    for t in timed:
        spans = sorted(t.spans)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))  # never two at once
    both = [(s, e) for t in timed for s, e in t.spans]
    assert any(s1 < e2 and s2 < e1 for i, (s1, e1) in enumerate(both) for (s2, e2) in both[i + 1:])  # in parallel


def test_visible_gpus_follow_cuda_visible_devices() -> None:
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}, count=8) == ["2", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-ab12,1"}) == ["GPU-ab12", "1"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}, count=8) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,-1,2"}) == ["0"]  # CUDA stops at the first invalid entry
    assert visible_gpus({}, count=2) == ["0", "1"] and visible_gpus({}, count=0) == []


def test_a_run_has_one_evaluator_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    from cudalens.agents.optimize_run import OptimizeSpec, devices_for

    cpu = ProfilerEvaluatorSettings(device="cpu")
    assert devices_for(OptimizeSpec("m.py", START, evaluator=cpu, cpu_slots=2)) == ["cpu0", "cpu1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU visible: one CPU slot
    assert devices_for(OptimizeSpec("m.py", START)) == ["cpu0"]


def test_the_wall_time_budget_stops_every_branch(key_env: str, tmp_path: Path) -> None:
    count = iter(range(100))

    def respond(body: dict) -> Scripted:  # slow replies, every one a new candidate
        return reply(fenced(model_new(f"return x.sum(dim=1) + {next(count)} * 0.0")), delay_s=1.5)

    with FakeOpenAI(responder=respond) as fake:
        result = _search(fake, key_env, tmp_path, rounds=20, search="tree", width=2, patience=100,
                         budget_seconds=4.0).run(START)
    assert result.stop_reason == "budget" and len(fake.requests) < 20


def test_a_cancel_kills_the_builds_ahead_in_flight() -> None:
    """Cancel stops every branch: a candidate still building ahead (a cold build is ≈ 25 s) is killed with it,
    not waited for."""

    from cudalens.profiler import processes

    def build(source: str, cancel: processes.CancelToken) -> None:  # a build that would take two minutes
        processes.run([sys.executable, "-c", "import time; time.sleep(120)"], timeout=300, cancel=cancel)

    settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=50)
    leases = DeviceLeases([ProfilerEvaluator(REFERENCE, settings)], ["cpu0"], build=build)
    halt, out = threading.Event(), []
    branch = threading.Thread(target=lambda: out.append(leases.evaluate(START, "test", halt)))
    try:
        branch.start()
        time.sleep(1.0)
        halt.set()
        leases.cancel()
        branch.join(timeout=60)
    finally:
        leases.close()
    assert not branch.is_alive() and out == [(None, "")]


def test_the_devices_are_idle_while_a_lease_is_free_and_nobody_waits_for_one() -> None:
    """What a search's profile ahead asks before it takes a GPU (LoopSettings.profile_ahead): a candidate waiting
    for the one device makes it busy, however briefly the device itself is held."""
    settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=30, profile=False)
    leases = DeviceLeases([ProfilerEvaluator(REFERENCE, settings)], ["cpu0"])
    seen: list[bool] = []
    try:
        assert leases.idle()
        first = threading.Thread(target=leases.evaluate, args=(SLOW, "time"))
        first.start()
        while leases.idle():  # the first candidate takes the lease
            time.sleep(0.01)
        second = threading.Thread(target=leases.evaluate, args=(FAST, "time"))
        second.start()
        while first.is_alive():
            seen.append(leases.idle())
            time.sleep(0.02)
        first.join(), second.join(timeout=120)
        assert leases.idle()
    finally:
        leases.close()
    assert seen and not any(seen)


@pytest.mark.parametrize(("search", "width", "ahead"), [("beam", 2, True), ("chain", 1, False)])
def test_a_wide_search_builds_ahead_of_its_lease_and_a_chain_does_not(
    key_env: str, tmp_path: Path, search: str, width: int, ahead: bool
) -> None:
    """`cudalens optimize` and the server give no build_ahead: a search with several candidates in flight then
    builds each before its device's lease, and every evaluation says how long it waited for that lease."""
    from cudalens.agents.optimize_run import OptimizeRun, OptimizeSpec

    variants = [model_new(f"return x.sum(dim=1) + {i} * 0.0") for i in range(2)]
    with FakeOpenAI([reply(fenced(v)) for v in variants]) as fake:
        spec = OptimizeSpec(
            str(tmp_path / "row_sum.py"), START, "row_sum",
            CoderSettings(base_url=fake.base_url, model="fake", api_key_env=key_env),
            LoopSettings(rounds=2, patience=10, search=search, width=width, anti_cheat=CPU_POLICY),
            ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=30, profile=False),
            gpu=DEFAULT_GPU,
        )
        run = OptimizeRun(spec)
        try:
            result = run.run()
        finally:
            run.close()
    evaluated = [n for n in result.rounds if n.evaluation is not None and n.duplicate_of is None]
    assert len(evaluated) == 3
    for node in evaluated:
        stages = dict(node.evaluation.stages)
        assert "lease wait" in stages and ("build ahead" in stages) == ahead, stages
