"""The Coder stand-in that benchmarks/search_standin.py measures the search with: its replies are mutations of
the candidate a prompt is about, and the machinery runs end to end on CPU with it."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import search_standin  # noqa: E402

from cudalens.agents.coder.prompts import PromptContext, optimize_messages, repair_messages  # noqa: E402
from cudalens.agents.gpu_specs import DEFAULT_GPU  # noqa: E402
from cudalens.agents.judge.methods import METHODS  # noqa: E402
from cudalens.agents.judge.verdict import Verdict  # noqa: E402

FAMILY = search_standin.FAMILIES["row_sum_cpu"]


def _params(text: str) -> dict:
    return json.loads(search_standin.MARK.search(text).group(1))


def _body(messages: list[dict]) -> dict:
    return {"messages": messages}


def _verdict(method: str) -> Verdict:
    m = METHODS[method]
    return Verdict("k", "measured", "memory-bound", bottleneck="memory", method=m.key, method_title=m.title,
                   plan=m.plan)


def test_a_reply_mutates_one_axis_of_the_candidate_in_the_prompt() -> None:
    parent = {"chunk": 16, "rows": 8}
    source = FAMILY.source(parent)
    ctx = PromptContext(FAMILY.reference, source, DEFAULT_GPU, _verdict("vectorize-memory-access"))
    standin = search_standin.StandIn(FAMILY, seed=1, p_wrong=0, p_fail=0)
    first = standin(_body(optimize_messages(ctx))).content
    child = _params(first)
    assert child["rows"] == 8 and child["chunk"] in (4, 64)  # the method steers the chunk axis, one step
    again = [_params(standin(_body(optimize_messages(ctx))).content) for _ in range(6)]
    assert len({json.dumps(p) for p in again}) > 1  # asked again, the stand-in varies its answer
    replay = search_standin.StandIn(FAMILY, seed=1, p_wrong=0, p_fail=0)
    assert replay(_body(optimize_messages(ctx))).content == first  # deterministic per prompt and seed


def test_flawed_variants_and_repairs() -> None:
    parent = {"chunk": 4, "rows": 1}
    ctx = PromptContext(FAMILY.reference, FAMILY.source(parent), DEFAULT_GPU, _verdict("increase-parallelism"))
    wrong = search_standin.StandIn(FAMILY, p_wrong=1.0)(_body(optimize_messages(ctx))).content
    assert "* 1.01" in wrong
    failing = search_standin.StandIn(FAMILY, p_wrong=0, p_fail=1.0)(_body(optimize_messages(ctx))).content
    assert "raise RuntimeError" in failing
    broken = PromptContext(FAMILY.reference, FAMILY.source(parent, "wrong"), DEFAULT_GPU,
                           Verdict("k", "failing", "wrong result"), "")
    repaired = [search_standin.StandIn(FAMILY, seed=s)(_body(repair_messages(broken))).content for s in range(5)]
    assert all(_params(r) == parent for r in repaired) and any("* 1.01" not in r for r in repaired)


def test_the_search_machinery_runs_on_cpu_with_the_standin(tmp_path: Path) -> None:
    args = argparse.Namespace(evaluations=5, width=2, seed=0, llm_seconds=0.0, no_profile=True, timeout=120.0,
                              budget_ms=20.0, cpu_slots=2, no_build_ahead=True)
    row = search_standin.run_one(FAMILY, "beam", args, tmp_path)
    result = row.result
    assert result is not None and len(result.rounds) == 6 and result.stop_reason == "rounds"
    assert all(n.parent is not None for n in result.rounds[1:])
    assert row.evaluations + row.duplicates + sum(n.source is None for n in result.rounds[1:]) == 5
    assert row.best_speedup is not None and row.best_params.startswith("{")
    assert {n.device for n in result.rounds if n.evaluation is not None} <= {"cpu0", "cpu1"}
    assert (result.run_dir / "summary.md").read_text().count("#") > 5
    # how busy the devices were, the measure of a search that keeps its GPUs busy (issue 39)
    held = re.search(r"devices held ([\d.]+) s of ([\d.]+) s after round 0 \((\d+)% busy\)", row.where_the_time_went())
    assert held and 0 < float(held.group(1)) <= float(held.group(2)), row.where_the_time_went()


def test_a_replayed_chain_evaluates_the_same_candidates_and_reads_its_best_back(tmp_path: Path) -> None:
    """`--replay RUN` gives a chain the replies another run got, in order: the same candidates, whatever the
    prompts say now (how the Ray path is compared with the local one on the GPU)."""
    args = argparse.Namespace(evaluations=3, width=1, seed=0, llm_seconds=0.0, no_profile=True, timeout=120.0,
                              budget_ms=20.0, cpu_slots=1, no_build_ahead=True)
    first = search_standin.run_one(FAMILY, "chain", args, tmp_path / "first").result
    again = search_standin.run_one(
        FAMILY, "chain", argparse.Namespace(**vars(args), replay=str(first.run_dir)), tmp_path / "again"
    ).result
    assert [n.source for n in again.rounds] == [n.source for n in first.rounds]
    # which of them is best follows the timings (on a loaded CPU, noise): on the GPU the stage compares them
    assert search_standin.best_of_run(first.run_dir)[0] == first.best_round
