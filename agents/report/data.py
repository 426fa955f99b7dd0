"""What a report shows, read from an optimize run's folder (`.cudalens/runs/<stamp>-<kernel>/`) or from one
kernel file: roofline points, per-line counters of one source, the rounds' history and the Judge's verdicts.

A run folder is read as `agents/run_log.py` and the loop wrote it (summary.json, round-NN/{source.*,
evaluation.json, verdict.json}); a file is analysed, judged (predicted, or measured when a profile is given) and,
on request, profiled.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cudalens.agents.evaluation import LineCounter, ProfileMetrics
from cudalens.agents.gpu_specs import DEFAULT_GPU, GpuSpecs
from cudalens.agents.judge import Verdict, judge, judge_input
from cudalens.agents.judge.roofline import Roofline, roofline
from cudalens.analysis.api import analyze_text
from cudalens.analysis.features import KernelFeatures


class ReportError(Exception):
    """A folder or file that is not something a report can be made of: one line for the user."""


@dataclass(frozen=True)
class Point:
    label: str  # "round 3 · transpose" or the kernel's name
    roofline: Roofline
    best: bool = False


@dataclass(frozen=True)
class Round:
    index: int
    kind: str
    status: str
    speedup: float | None
    tokens: int
    cost_usd: float
    verdict: str


@dataclass(frozen=True)
class KernelVerdict:
    label: str
    verdict: Verdict
    features: KernelFeatures | None = None


@dataclass(frozen=True)
class Table:
    """A section of plain rows (the whole-model page's): its anchor, heading, column names, rows, notes under it."""
    anchor: str
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()


@dataclass
class ReportData:
    title: str
    gpu: GpuSpecs
    source_name: str = ""
    source: str = ""
    lines: tuple[LineCounter, ...] = ()  # per-line counters of `source`
    points: list[Point] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    verdicts: list[KernelVerdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)  # drawn first; a page of tables alone has no roofline
    gpu_why: str = ""  # why these peaks (this machine's, the H200's for want of a GPU, --gpu's)


def load(target: Path, gpu: GpuSpecs = DEFAULT_GPU, profile: bool = False,
         measured: Sequence[ProfileMetrics] = ()) -> ReportData:
    """`measured`: a FILE's profile already taken (the editor's last run), used instead of profiling again."""
    if target.is_dir():
        return load_run(target, gpu)
    if target.is_file():
        return load_file(target, gpu, profile, measured)
    raise ReportError(f"{target}: no such file or folder")


def _profiles(evaluation: dict) -> list[ProfileMetrics]:
    out = []
    for p in evaluation.get("profiles") or ():
        metrics = {str(k): float(v) for k, v in p.get("metrics") or () if isinstance(v, (int, float))}
        lines = tuple(LineCounter(int(c["line"]), str(c["metric"]), float(c["value"])) for c in p.get("lines") or ())
        out.append(ProfileMetrics.of(str(p["kernel"]), metrics, lines, int(p.get("launches") or 1)))
    return out


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: not readable JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a JSON object")
    return data


def load_run(folder: Path, gpu: GpuSpecs) -> ReportData:
    summary_path = folder / "summary.json"
    if not summary_path.is_file():
        raise ReportError(f"{folder}: not an optimize run (no summary.json; runs live in .cudalens/runs/)")
    summary = _json(summary_path)
    best = summary.get("best_round")
    data = ReportData(f"Optimize run: {summary.get('kernel') or 'model'}", gpu)
    for row in summary.get("rounds") or ():
        data.rounds.append(Round(int(row["round"]), str(row.get("kind", "")), str(row.get("status", "")),
                                 row.get("speedup"), int(row.get("tokens") or 0), float(row.get("cost_usd") or 0.0),
                                 str(row.get("verdict") or "")))
    shown = best if best is not None else (data.rounds[-1].index if data.rounds else None)
    for round_dir in sorted(folder.glob("round-*")):
        index = int(round_dir.name.split("-")[1])
        evaluation = _json(round_dir / "evaluation.json") if (round_dir / "evaluation.json").is_file() else {}
        for p in _profiles(evaluation):
            r = roofline(p, gpu)
            if r is not None:
                data.points.append(Point(f"round {index} · {p.kernel}", r, best=index == best))
            if index == shown and p.lines:
                data.lines = (*data.lines, *p.lines)
        if (round_dir / "verdict.json").is_file():
            data.verdicts.append(KernelVerdict(f"round {index}", Verdict.from_json(_json(round_dir / "verdict.json"))))
        sources = sorted(round_dir.glob("source.*"))
        if index == shown and sources:
            data.source_name, data.source = f"round {index}: {sources[0].name}", sources[0].read_text(encoding="utf-8")
    if not data.points:
        data.notes.append("no round was profiled with Nsight Compute: the roofline needs a GPU run")
    return data


def load_file(path: Path, gpu: GpuSpecs, profile: bool, given: Sequence[ProfileMetrics] = ()) -> ReportData:
    text = path.read_text(encoding="utf-8", errors="replace")
    report = analyze_text(str(path), text)
    if not report.kernels:
        raise ReportError(f"{path}: no __global__ kernel found")
    data = ReportData(f"Kernels of {path.name}", gpu, path.name, text)
    measured: dict[str, ProfileMetrics] = {p.kernel: p for p in given}
    if profile and not given:
        from cudalens.agents.profiler_evaluator import profile_metrics
        from cudalens.profiler.ncu.profile import ProfileRequest, profile_file

        ncu = profile_file(ProfileRequest(str(path)))
        if ncu.error:
            data.notes.append(f"ncu: {ncu.error}")
        measured = {p.kernel: p for p in profile_metrics(ncu)}
    elif not given:
        data.notes.append("not profiled (run `cudalens report FILE --profile` on a GPU for the roofline and "
                          "per-line counters): verdicts are predicted")
    for k in report.kernels:
        own = tuple(f for f in report.findings if f.kernel == k.name)
        metrics = measured.get(k.name)
        inp = judge_input(None, k.name, own, k, gpu=gpu)
        if metrics is not None:
            inp = replace(inp, metrics=metrics)
            r = roofline(metrics, gpu)
            if r is not None:
                data.points.append(Point(k.name, r))
            data.lines = (*data.lines, *metrics.lines)
        data.verdicts.append(KernelVerdict(k.name, judge(inp), k.features))
    return data
