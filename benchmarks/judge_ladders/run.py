"""The Judge on public optimization ladders: does it name the method that really gave the next step?

    python benchmarks/judge_ladders/run.py --part 1 [--out DIR]      # on a GPU, then --part 2
    python benchmarks/judge_ladders/run.py --part 3                  # the held-out ladders, a table of their own
    python benchmarks/judge_ladders/run.py --table DIR [DIR ...]     # the table from saved results, no GPU
    python benchmarks/judge_ladders/run.py --replay measured_h200.json  # today's Judge on recorded counters
    python benchmarks/judge_ladders/run.py --table DIR ... --keep measured_h200.json  # keep a GPU run's rows

Each ladder (sgemm.py, reduction.py, …) is a public step-by-step optimization; each step is rendered as a
KernelBench file and evaluated exactly as a round of the optimize loop evaluates a candidate: compile resources,
≥ 5 correctness trials on fresh inputs, timing with the L2 flushed, Nsight Compute with the Judge's metric set
(ProfilerEvaluator + WithCompileResources), then `judge(judge_input(...))` with the kernel's static findings. A
case is step k with the method that gave step k+1; it counts only when both steps are correct and step k+1 is
measured at least 1.15× faster. The last step of a ladder is timed, not profiled.

Prints a row per case and writes DIR/<case>.json as each case ends; then the confusion table (the truth's
method × the Judge's first method), first-method and bottleneck accuracy over the counted cases, as markdown to
DIR/judge_ladders.md and, where $OUT is set, $OUT/judge_ladders.md. Each part fits a 6-minute call on one H200
(`--deadline` stops starting ladders past it). Exit 0 when both accuracies reach 90 %.

Part 3 is held out: ladders written after the Judge's rules were tuned on parts 1 and 2 (heldout_*.py), so that
its accuracy is a measure on kernels the rules were not written on. Its results go to a folder of their own
(out-heldout/ unless --out says), so that its table is not merged with the tuned parts' results.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from ladder import Case, Ladder, cases  # noqa: E402

FAMILIES = {  # a device call each: each part inside 6 minutes on one H200
    1: ("sgemm", "reduction", "transpose", "hgemm", "softmax"),
    2: ("layernorm", "atomics", "launches", "parallelism", "divergence", "stencil", "gemv", "occupancy", "latency"),
    # held out: ladders written after the Judge's rules were tuned on parts 1 and 2, never used to tune them
    3: ("heldout_dot", "heldout_residual", "heldout_permute", "heldout_scan", "heldout_bmm", "heldout_encoder"),
}
HELD_OUT = 3
FASTER = 1.15  # step k+1 must be measured at least this much faster for the case to count
GOAL = 0.9


def ladders(part: int | None = None) -> tuple[Ladder, ...]:
    out = []
    for number, names in FAMILIES.items():
        if part is not None and number != part:
            continue
        for name in names:
            module = importlib.import_module(name)
            out.extend(getattr(module, "LADDERS", None) or (module.LADDER,))
    return tuple(out)


def all_cases() -> list[Case]:
    return cases(ladders())


def _median_ms(evaluation) -> float | None:
    timing = evaluation.timing
    return timing.candidate.median if timing is not None and evaluation.correct else None


def evaluate_ladder(ladder: Ladder, folder: Path, timeout_s: float) -> list[dict]:
    """Every step of one ladder through the loop's evaluator, each case judged: the rows of its cases."""
    from cudalens.agents.gpu_specs import detect_gpu_specs
    from cudalens.agents.judge import judge, judge_input
    from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
    from cudalens.agents.resources import WithCompileResources

    gpu = detect_gpu_specs()
    texts = [(folder / ladder.file(i)).read_text(encoding="utf-8") for i in range(len(ladder.steps))]
    evaluator = ProfilerEvaluator(texts[0], ProfilerEvaluatorSettings(timeout_s=timeout_s, ncu_standby=False))
    steps = []
    try:
        for i, (step, text) in enumerate(zip(ladder.steps, texts, strict=True)):
            started = time.perf_counter()
            path = str(folder / ladder.file(i))
            kind = "full" if step.method is not None else "time"
            try:
                evaluation = WithCompileResources(evaluator, path).evaluate(text, kind)
            except Exception as exc:  # one step that cannot run drops its cases, not the table
                steps.append({"error": f"{type(exc).__name__}: {exc}"})
                continue
            verdict, counters = None, None
            if step.method is not None and evaluation.correct:
                info, own = static_view(path, text, step.judged)
                inp = judge_input(evaluation, step.judged, own, info, gpu=gpu)
                counters = recorded(inp)
                verdict = judge(inp)
            steps.append({
                "counters": counters,
                "correct": evaluation.correct, "median_ms": _median_ms(evaluation), "verdict": verdict,
                "notes": list(evaluation.notes), "profiled": [p.kernel for p in evaluation.profiles],
                "failure": "" if evaluation.correct else (evaluation.correctness.message or evaluation.compile.log)[-600:],
                "seconds": round(time.perf_counter() - started, 1),
            })
    finally:
        evaluator.close()
    rows = []
    for case in cases((ladder,)):
        now, after = steps[case.index], steps[case.index + 1] if case.index + 1 < len(steps) else {"error": "none"}
        rows.append(row(case, now, after))
    return rows


def static_view(path: str, text: str, kernel: str):
    """What the analyzer tells the Judge about one kernel of a step: its KernelInfo and its own findings."""
    from cudalens.analysis.api import analyze_text

    report = analyze_text(path, text)
    return (next((k for k in report.kernels if k.name == kernel), None),
            tuple(f for f in report.findings if f.kernel == kernel))


def recorded(inp) -> dict:
    """What the Judge read from the GPU for one step (the judged kernel's counters, the call's other kernels',
    the GPU's specs) as JSON: a rule change is then replayed on the CPU (--replay) on the same measurements."""
    from dataclasses import asdict

    def kernel(p) -> dict:
        return {"kernel": p.kernel, "launches": p.launches, "metrics": dict(p.metrics)}

    return {**kernel(inp.metrics), "call": [kernel(p) for p in inp.call], "gpu": asdict(inp.gpu)}


def judged_again(row: dict, case: Case):
    """Today's Judge on a row's recorded counters, with the static half (findings, the kernel's features)
    derived again from the step's text by today's analyzer."""
    from cudalens.agents.evaluation import ProfileMetrics
    from cudalens.agents.gpu_specs import GpuSpecs
    from cudalens.agents.judge import JudgeInput, judge

    c = row["counters"]

    def profile(k: dict) -> ProfileMetrics:
        return ProfileMetrics.of(k["kernel"], k["metrics"], launches=k["launches"])

    info, own = static_view(case.ladder.file(case.index), case.ladder.render(case.index), case.step.judged)
    return judge(JudgeInput(
        kernel=case.step.judged, findings=own, kernel_info=info,
        metrics=profile(c), call=tuple(profile(k) for k in c["call"]), gpu=GpuSpecs(**c["gpu"]),
    ))


def replay(rows: list[dict]) -> list[dict]:
    """Each measured case re-judged by today's Judge from the counters its GPU run recorded: the rows, no GPU."""
    out = []
    for saved in rows:
        case = next(c for c in all_cases() if c.name == saved["case"])
        if not saved.get("counters"):
            out.append(saved)
            continue
        v = judged_again(saved, case)
        out.append(saved | {
            "method": v.method, "bottleneck": v.bottleneck, "runner_up": v.runner_up,
            "right": v.method in case.accepted, "bottleneck_right": v.bottleneck in case.bottlenecks,
            "evidence": [f"{e.shown()}: {e.meaning}" for e in v.evidence], "summary": v.summary,
        })
    return out


def row(case: Case, now: dict, after: dict) -> dict:
    t_now, t_after = now.get("median_ms"), after.get("median_ms")
    speedup = t_now / t_after if t_now and t_after else None
    reason = ""
    if "error" in now or not now.get("correct"):
        reason = f"step {case.index + 1} failed: {now.get('error') or now.get('failure', '')}"
    elif "error" in after or not after.get("correct"):
        reason = f"step {case.index + 2} failed: {after.get('error') or after.get('failure', '')}"
    elif speedup is None or speedup < FASTER:
        reason = f"next step only {speedup or 0:.2f}× faster (needs {FASTER}×)"
    v = now.get("verdict")
    return {
        "case": case.name, "ladder": case.ladder.title, "step": case.step.name, "truth": case.method,
        "accepted": list(case.accepted), "bottlenecks": list(case.bottlenecks), "counted": not reason,
        "reason": reason, "ms": t_now, "next_ms": t_after, "speedup": speedup,
        "method": v.method if v else None, "bottleneck": v.bottleneck if v else None,
        "runner_up": v.runner_up if v else None,
        "right": bool(v and v.method in case.accepted),
        "bottleneck_right": bool(v and v.bottleneck in case.bottlenecks),
        "evidence": [f"{e.shown()}: {e.meaning}" for e in v.evidence] if v else [],
        "summary": v.summary if v else "", "seconds": now.get("seconds"), "profiled": now.get("profiled", []),
        "counters": now.get("counters"),
    }


def table(rows: list[dict]) -> str:
    """The markdown report: the confusion table over the counted cases, the accuracies, then every case."""
    counted = [r for r in rows if r["counted"]]
    right = sum(r["right"] for r in counted)
    b_right = sum(r["bottleneck_right"] for r in counted)
    close = sum(1 for r in counted if not r["right"] and r["runner_up"] in r["accepted"])
    methods = sorted({r["truth"] for r in counted} | {r["method"] or "none" for r in counted})
    short = {m: f"{i + 1}" for i, m in enumerate(methods)}
    counts = Counter((r["truth"], r["method"] or "none") for r in counted)
    n = len(counted)
    lines = [
        f"**First method right: {right}/{n}" + (f" = {right / n:.0%}" if n else "") + f"; bottleneck right: "
        f"{b_right}/{n}" + (f" = {b_right / n:.0%}" if n else "") + f"** (goal {GOAL:.0%}); {close} of the misses "
        f"named the truth as the close second method; {len(rows) - n} of {len(rows)} cases not counted (below).",
        "",
        "| truth \\ chosen | " + " | ".join(short[m] for m in methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    for truth in dict.fromkeys(r["truth"] for r in counted):
        cells = [str(counts[(truth, m)] or ".") for m in methods]
        lines.append(f"| {short[truth]} {truth} | " + " | ".join(cells) + " |")
    lines += ["", "Columns: " + ", ".join(f"{short[m]} = {m}" for m in methods) + ".", "",
              "| case | step k | truth (step k+1) | k → k+1 | Judge | bottleneck | deciding evidence |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        timing = (f"{r['ms']:.3f} → {r['next_ms']:.3f} ms ({r['speedup']:.2f}×)"
                  if r["ms"] and r["next_ms"] else "—")
        if not r["counted"]:
            timing += f"; not counted: {r['reason'][:120]}"
        judged = (r["method"] or "—") + (" ✓" if r["right"] else "") + (
            f" (close: {r['runner_up']})" if r["runner_up"] else "")
        lines.append(f"| {r['case']} | {r['step']} | {r['truth']} | {timing} | {judged} | {r['bottleneck'] or '—'} "
                     f"| {(r['evidence'] or ['—'])[0]} |")
    return "\n".join(lines) + "\n"


def load(sources: list[Path]) -> list[dict]:
    """The case rows of result folders (one JSON a case) and kept files (a list of rows), later ones winning."""
    known = {c.name for c in all_cases()}
    rows = {}
    for source in sources:
        found = [json.loads(source.read_text(encoding="utf-8"))] if source.is_file() else [
            json.loads(path.read_text(encoding="utf-8")) for path in sorted(source.glob("*.json"))]
        for data in (d for item in found for d in (item if isinstance(item, list) else [item])):
            if data.get("case") in known:
                rows[data["case"]] = data
    order = [c.name for c in all_cases()]
    return sorted(rows.values(), key=lambda r: order.index(r["case"]))


def report(rows: list[dict], out: Path) -> int:
    text = table(rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "judge_ladders.md").write_text(text, encoding="utf-8")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"]).mkdir(parents=True, exist_ok=True)
        (Path(os.environ["OUT"]) / "judge_ladders.md").write_text(text, encoding="utf-8")
    print(text)
    counted = [r for r in rows if r["counted"]]
    ok = counted and all(sum(r[k] for r in counted) >= GOAL * len(counted) for k in ("right", "bottleneck_right"))
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", type=int, choices=sorted(FAMILIES), help="which device call's ladders")
    parser.add_argument("--out", type=Path, help="the results' folder (default out/, out-heldout/ for --part 3)")
    parser.add_argument("--only", default="", help="comma-separated ladder keys (sgemm,histogram): a rerun")
    parser.add_argument("--table", type=Path, nargs="+", help="print the table from these result folders")
    parser.add_argument("--replay", type=Path, nargs="+", help="re-judge these results' recorded counters (no GPU)")
    parser.add_argument("--keep", type=Path, help="with --table: also write the merged rows to this file")
    parser.add_argument("--timeout", type=float, default=240.0, help="per step, seconds")
    parser.add_argument("--deadline", type=float, default=250.0, help="start no ladder after this many seconds")
    args = parser.parse_args(argv)
    args.out = args.out or HERE / ("out-heldout" if args.part == HELD_OUT else "out")
    if args.table:
        rows = load(args.table)
        if args.keep:
            args.keep.write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")
        return report(rows, args.out)
    if args.replay:
        return report(replay(load(args.replay)), args.out)
    if args.part is None and not args.only:
        parser.error("give --part 1, 2 or 3 (on a GPU), --only KEYS, or --table DIR")
    from cudalens.profiler.prebuild import prebuild

    began = time.perf_counter()
    chosen = tuple(lad for lad in ladders(args.part) if not args.only or lad.key in args.only.split(","))
    problems = args.out / "problems"
    problems.mkdir(parents=True, exist_ok=True)
    paths = []
    for lad in chosen:
        for i in range(len(lad.steps)):
            (problems / lad.file(i)).write_text(lad.render(i), encoding="utf-8")
            paths.append(str(problems / lad.file(i)))
    # every step's extension built at once first (12 at a time on 16 cores): each evaluation then finds its build
    failed = [b for b in prebuild(paths, timeout=args.timeout, workers=12) if not b.ok]
    print(f"built {len(paths)} steps in {time.perf_counter() - began:.0f} s"
          + "".join(f"\n  FAILED {Path(b.path).name}: {b.message[-300:]}" for b in failed), flush=True)
    for lad in chosen:
        if time.perf_counter() - began > args.deadline:
            print(f"skipped {lad.key}: past the {args.deadline:.0f} s deadline", flush=True)
            continue
        for r in evaluate_ladder(lad, problems, args.timeout):
            (args.out / f"{r['case']}.json").write_text(json.dumps(r, indent=2, default=str), encoding="utf-8")
            mark = "ok " if r["right"] else ("BAD" if r["counted"] else " - ")
            speed = f"{r['speedup']:.2f}×" if r["speedup"] else "—"
            print(f"{mark} {r['case']:<22} {r['bottleneck'] or '-':<10} {r['method'] or '-':<26} truth {r['truth']:<26}"
                  f" next {speed}" + (f" close: {r['runner_up']}" if r["runner_up"] else "")
                  + (f"  [{r['reason'][:160]}]" if r["reason"] else ""), flush=True)
            for line in r["evidence"]:
                print(f"      {line}", flush=True)
        print(f"  {lad.key} done at {time.perf_counter() - began:.0f} s", flush=True)
    return report(load([args.out]), args.out)


if __name__ == "__main__":
    sys.exit(main())
