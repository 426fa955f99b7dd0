"""The public-ladder suite is well-formed (the GPU run that measures it: `benchmarks/judge_ladders/run.py`): each
step renders as a KernelBench file whose judged kernel the analyzer finds and nvcc compiles, ≥ 30 cases over
≥ 8 methods, and a case counts only when its next step was measured faster."""

from __future__ import annotations

import runpy
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from cudalens.agents.judge.methods import METHODS
from cudalens.agents.judge.verdict import Evidence, Verdict
from cudalens.analysis.api import analyze_text

LADDERS = Path(__file__).resolve().parents[2] / "benchmarks" / "judge_ladders"
sys.path.insert(0, str(LADDERS))
RUN = runpy.run_path(str(LADDERS / "run.py"), run_name="judge_ladders")
CASES = RUN["all_cases"]()
STEPS = [(lad, i) for lad in RUN["ladders"]() for i in range(len(lad.steps))]


def test_at_least_30_cases_over_at_least_8_methods_each_a_known_method() -> None:
    methods = Counter(c.method for c in CASES)
    assert len(CASES) >= 30 and len(methods) >= 8
    assert set(methods) <= set(METHODS)
    assert all(set(c.accepted) <= set(METHODS) for c in CASES)


def test_the_held_out_part_has_8_cases_over_5_methods_none_of_them_measured_for_tuning() -> None:
    """Part 3 was written after the rules were tuned on parts 1 and 2: no case of it may be among the recorded
    counters the rules are replayed on (measured_h200.json), so that its accuracy stays a held-out measure."""
    held_out = RUN["cases"](RUN["ladders"](RUN["HELD_OUT"]))
    assert len(held_out) >= 8 and len({c.method for c in held_out}) >= 5
    assert all(c.ladder.key.startswith("heldout_") for c in held_out)
    tuned = {r["case"] for r in RUN["load"]([MEASURED])}
    assert tuned and not tuned & {c.name for c in held_out}


def test_file_and_extension_names_are_unique_and_every_ladder_names_its_origin() -> None:
    names = [lad.file(i) for lad, i in STEPS]
    assert len(names) == len(set(names))
    ladders = {lad.key: lad for lad, _ in STEPS}
    assert all(lad.origin.startswith("After ") for lad in ladders.values())
    assert all(lad.steps[-1].method is None and all(s.method for s in lad.steps[:-1]) for lad in ladders.values())


@pytest.mark.parametrize(("ladder", "index"), STEPS, ids=[lad.file(i)[:-3] for lad, i in STEPS])
def test_each_step_is_a_kernelbench_file_whose_judged_kernel_the_analyzer_finds(ladder, index) -> None:
    text = ladder.render(index)
    compile(text, ladder.file(index), "exec")  # valid Python
    for part in ("class Model(", "class ModelNew(", "def get_inputs", "def get_init_inputs", "load_inline("):
        assert part in text
    kernels = {k.name for k in analyze_text(ladder.file(index), text).kernels}
    assert ladder.steps[index].judged in kernels


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (no GPU)")
@pytest.mark.parametrize("ladder", sorted({lad.key: lad for lad, _ in STEPS}.values(), key=lambda lad: lad.key),
                         ids=lambda lad: lad.key)
def test_every_steps_device_code_compiles(ladder, tmp_path) -> None:
    from cudalens.agents.resources import compile_resources

    for index, step in enumerate(ladder.steps):
        path = tmp_path / ladder.file(index)
        text = ladder.render(index)
        path.write_text(text)
        built, note = compile_resources(str(path), text)
        assert any(step.judged == k.resources.short_name for k in built), note


def _verdict(method: str) -> Verdict:
    return Verdict("k", "measured", "x", bottleneck="memory", method=method, evidence=(Evidence("m", 1.0, "why"),))


def test_a_case_counts_only_when_both_steps_pass_and_the_next_is_faster() -> None:
    case = next(c for c in CASES if c.method == "coalesce-global-access")
    now = {"correct": True, "median_ms": 2.0, "verdict": _verdict(case.method)}
    counted = RUN["row"](case, now, {"correct": True, "median_ms": 1.0})
    assert counted["counted"] and counted["right"] and counted["speedup"] == 2.0
    slow = RUN["row"](case, now, {"correct": True, "median_ms": 1.9})
    assert not slow["counted"] and "1.05×" in slow["reason"]
    wrong = RUN["row"](case, now, {"correct": False, "median_ms": None, "failure": "values differ"})
    assert not wrong["counted"] and "values differ" in wrong["reason"]
    table = RUN["table"]([counted, slow, wrong])
    assert "**First method right: 1/1 = 100%; bottleneck right: 1/1 = 100%**" in table
    assert "2 of 3 cases not counted" in table


MEASURED = LADDERS / "measured_h200.json"


def test_the_judge_on_the_counters_the_h200_measured_keeps_its_accuracy() -> None:
    """Today's Judge on every counted case's recorded H200 counters (run.py --replay): a rule change that loses a
    case the ladders measured fails here, on the CPU. The floor is the last measured figure (docs/optimize.md)."""
    rows = [r for r in RUN["replay"](RUN["load"]([MEASURED])) if r["counted"]]
    right = sum(r["right"] for r in rows)
    bottleneck_right = sum(r["bottleneck_right"] for r in rows)
    assert len(rows) >= 30
    assert right >= 0.9 * len(rows), [(r["case"], r["truth"], r["method"]) for r in rows if not r["right"]]
    assert bottleneck_right >= 0.9 * len(rows)


def test_recorded_counters_are_metrics_the_profiler_asks_for() -> None:
    from cudalens.profiler.ncu.metrics import METRICS

    rows = [r for r in RUN["load"]([MEASURED]) if r.get("counters")]
    named = {name for r in rows for k in (r["counters"], *r["counters"]["call"]) for name in k["metrics"]}
    assert named and named <= set(METRICS)


def test_every_case_names_the_bottlenecks_its_method_fits() -> None:
    """A method without bottleneck names stopped the held-out part's first GPU call (KeyError) after its builds."""
    from ladder import BOTTLENECKS

    assert set(BOTTLENECKS) == set(METHODS)
    assert all(c.bottlenecks for c in CASES)
