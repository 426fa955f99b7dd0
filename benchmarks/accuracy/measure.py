"""Measure the accuracy corpus on the GPU: the ground truth that `score.py` holds the static analyzer to.

For every corpus file (benchmarks/accuracy/kernels/*.cu and, when fetched, public/*.cu):
1. build it with `nvcc -O3 -lineinfo -arch=sm_90` (all files in parallel);
2. profile every launch with `ncu --clock-control none --section SourceCounters --import-source yes` plus a
   few kernel-level counters, one binary at a time, and read the per-instruction source counters back
   through Nsight Compute's own Python module (`ncu_report`, shipped in `<ncu>/extras/python`), mapping
   each SASS instruction to its CUDA line; the raw CSV pages are saved too, for the record and as the
   fallback when `ncu_report` cannot be imported;
3. run `compute-sanitizer --tool racecheck` and `--tool synccheck` (in parallel, alongside step 2: those
   tools never touch the counters ncu reads per instruction, which are exact instruction counts).

Per kernel and line it writes the measured labels to `truth.json` (in `--out` and, with `--update`, next
to this script):
- uncoalesced: a global load/store instruction on the line moves >= 1.5x the sectors of the ideal access
  pattern for its active threads (`memory_l2_theoretical_sectors_global` / `..._ideal`). Strides of 2, 4, 32
  elements give 2x, 4x, 8x; misalignment by one element gives 1.25x at most (5 sectors instead of 4), so
  1.5 separates a structural stride from an alignment artefact.
- bank_conflict: a shared-memory instruction on the line needs >= 1.5x its ideal wavefronts
  (`memory_l1_wavefronts_shared` / `..._ideal`); n-way is that ratio (a 2-way conflict on every execution
  gives 2.0, 8/16-byte accesses by consecutive lanes give 1.0 because the ideal already counts their phases).
- divergence: the line's warp-instructions run with on average < 75 % of the kernel's full-warp active lanes
  (`thread_inst_executed / inst_executed`, relative to the kernel's fullest line — its entry code — so a
  block of 48 threads does not make every line "divergent"), and the lanes those issues leave idle are
  >= 1 % of all the kernel's lane slots (a one-lane `if (lane == 0)` epilogue costs well under that in every
  corpus kernel; a divergent branch body spread over several lines must not need 5 % on each line).
  Active lanes, not predicated-on lanes: a short branch body the compiler predicates is not divergence.
- race: both lines of every hazard that racecheck reports (errors, and the warnings it gives
  write-after-read hazards); sync: every line synccheck reports.

    python3 benchmarks/accuracy/measure.py --out "$OUT" --update

Standard library only (Python 3.10+); needs nvcc, ncu and compute-sanitizer on PATH.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # a sibling module: this script runs without cudalens installed

HERE = corpus.HERE
UNCOALESCED_RATIO = 1.5
BANK_CONFLICT_RATIO = 1.5
DIVERGENCE_LANE_FRACTION = 0.75
DIVERGENCE_MIN_SHARE = 0.01
MIN_SECTORS = 32  # an instruction with fewer sectors in total is a tail, not a pattern

KERNEL_METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
)
# The launch's configuration, kept beside the counters: which block the labels were measured at.
LAUNCH_METRICS = ("launch__block_size", "launch__grid_size", "launch__shared_mem_per_block")
SOURCE_METRICS = (
    "inst_executed",
    "thread_inst_executed",
    "thread_inst_executed_true",
    "memory_l2_theoretical_sectors_global",
    "memory_l2_theoretical_sectors_global_ideal",
    "memory_l1_wavefronts_shared",
    "memory_l1_wavefronts_shared_ideal",
    "smsp__branch_targets_threads_divergent",
)
# Per-instruction enums kept for the record: memory_type 4 = global, 16 = shared; memory_access_type
# 2 = load, 4 = store, 8 = atomic.
CATEGORICAL_METRICS = ("memory_type", "memory_access_type")
# The source page's column labels for the same metrics (the CSV fallback).
SOURCE_LABELS = {
    "instructions executed": "inst_executed",
    "thread instructions executed": "thread_inst_executed",
    "predicated-on thread instructions executed": "thread_inst_executed_true",
    "l2 theoretical sectors global": "memory_l2_theoretical_sectors_global",
    "l2 theoretical sectors global ideal": "memory_l2_theoretical_sectors_global_ideal",
    "l1 wavefronts shared": "memory_l1_wavefronts_shared",
    "l1 wavefronts shared ideal": "memory_l1_wavefronts_shared_ideal",
    "divergent branches": "smsp__branch_targets_threads_divergent",
}


@dataclass
class Instruction:
    """One SASS instruction's source counters (summed over the launch) and the CUDA line it belongs to."""

    line: int
    values: dict[str, float] = field(default_factory=dict)
    sass: str = ""
    file: str = ""  # the source file's name (a kernel's lines may be in a header it includes)


@dataclass
class KernelProfile:
    name: str  # the function name as ncu reports it (demangled, without parameters)
    instructions: list[Instruction]
    metrics: dict[str, float]


def log(message: str) -> None:
    print(f"[measure {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], timeout: float, cwd: Path | None = None) -> tuple[int, str]:
    """A command's exit status and its stdout+stderr; a timeout or a missing tool is a status, not a crash."""
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, errors="replace", timeout=timeout, cwd=cwd, check=False
        )
        return done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return 124, out + f"\n[measure] timed out after {timeout:.0f}s"
    except OSError as exc:
        return 127, f"[measure] {exc}"


# ---------------------------------------------------------------- build


def build(source: Path, build_dir: Path, arch: str) -> tuple[Path | None, str]:
    binary = build_dir / source.stem
    cmd = ["nvcc", "-O3", "-lineinfo", f"-arch={arch}", "-I", str(source.parent), "-o", str(binary), str(source)]
    code, out = run(cmd, timeout=300)
    return (binary if code == 0 else None), out


# ---------------------------------------------------------------- ncu


def profile(binary: Path, report: Path, timeout: float) -> tuple[int, str]:
    cmd = [
        "ncu",
        "--clock-control",
        "none",
        "--section",
        "SourceCounters",
        "--metrics",
        ",".join((*KERNEL_METRICS, *LAUNCH_METRICS)),
        "--import-source",
        "yes",
        "--print-summary",
        "none",
        "-f",
        "-o",
        str(report.with_suffix("")),
        str(binary),
    ]
    return run(cmd, timeout=timeout, cwd=binary.parent)


def export_pages(report: Path, raw_dir: Path) -> dict[str, str]:
    """The raw and source pages as CSV, saved for the record; returns the source page text when it printed."""
    pages = {}
    for name, args in (
        ("raw", ["--page", "raw", "--csv"]),
        ("source", ["--page", "source", "--csv", "--print-source", "cuda,sass"]),
        ("source_cuda", ["--page", "source", "--csv", "--print-source", "cuda"]),
    ):
        code, out = run(["ncu", "-i", str(report), *args], timeout=120)
        (raw_dir / f"{report.stem}.{name}.csv").write_text(out)
        if code == 0:
            pages[name] = out
    return pages


def import_ncu_report():
    """Nsight Compute's Python report module, from the installation that `ncu` on PATH belongs to."""
    candidates = []
    ncu = shutil.which("ncu")
    if ncu:
        real = Path(os.path.realpath(ncu)).parent
        candidates += [real / "extras" / "python", real.parent / "extras" / "python"]
        candidates += [Path(p) for p in glob.glob(str(real.parent / "nsight-compute*" / "extras" / "python"))]
    candidates += [Path(p) for p in glob.glob("/usr/local/cuda*/nsight-compute*/extras/python")]
    candidates += [Path(p) for p in glob.glob("/opt/nvidia/nsight-compute/*/extras/python")]
    for candidate in candidates:
        if (candidate / "ncu_report.py").exists():
            sys.path.insert(0, str(candidate))
            try:
                import ncu_report  # type: ignore[import-not-found]

                return ncu_report
            except ImportError as exc:
                log(f"ncu_report at {candidate} does not import: {exc}")
                sys.path.remove(str(candidate))
    return None


def read_report(ncu_report, report: Path, source_name: str | Collection[str]) -> list[KernelProfile]:
    """Per-instruction source counters of every launch in the report, attributed to lines of `source_name`
    (a file name, or several: the instructions of other files are left out)."""
    context = ncu_report.load_report(str(report))
    kernels = []
    for range_index in range(context.num_ranges()):
        current = context.range_by_idx(range_index)
        for action_index in range(current.num_actions()):
            action = current.action_by_idx(action_index)
            kernels.append(_read_action(action, source_name))
    return kernels


def _read_action(action, source_name: str | Collection[str]) -> KernelProfile:
    names = _names(source_name)
    try:  # the bare function name, where the module offers it
        name = kernel_name(action.name(type(action).NameBase_FUNCTION))
    except Exception:
        name = kernel_name(action.name())
    by_pc: dict[int, Instruction] = {}
    for metric_name in (*SOURCE_METRICS, *CATEGORICAL_METRICS):
        metric = action.metric_by_name(metric_name)
        if metric is None or metric.num_instances() == 0 or not metric.has_correlation_ids():
            continue
        pcs = metric.correlation_ids()
        if pcs is None:
            continue
        for i in range(metric.num_instances()):
            pc = int(pcs.value(i))
            if pc not in by_pc:
                try:
                    info = action.source_info(pc)
                except Exception:  # a PC without line information (e.g. compiler-generated code)
                    info = None
                if info is None or Path(info.file_name()).name not in names:
                    continue
                by_pc[pc] = Instruction(line=info.line(), sass=_sass(action, pc), file=Path(info.file_name()).name)
            value = _instance_value(metric, i)
            if metric_name in CATEGORICAL_METRICS:
                by_pc[pc].values.setdefault(metric_name, value)  # an enum, not a count
            else:
                by_pc[pc].values[metric_name] = by_pc[pc].values.get(metric_name, 0.0) + value
    metrics = {}
    for metric_name in (*KERNEL_METRICS, *LAUNCH_METRICS):
        metric = action.metric_by_name(metric_name)
        if metric is not None:
            metrics[metric_name] = _instance_value(metric, None)
    return KernelProfile(name, [by_pc[pc] for pc in sorted(by_pc)], metrics)


def kernel_name(reported: str) -> str:
    """`void ns::reduce0<float>(float *, ...)` → `reduce0`: the name as written in the source."""
    words = re.sub(r"\(.*", "", reported).split("<")[0].split()
    return (words[-1] if words else reported).split("::")[-1]


def _instance_value(metric, index: int | None) -> float:
    """A metric's value (one instance's, or the whole launch's) as a float; NaN, None and text become 0."""
    try:
        value = metric.value() if index is None else metric.value(index)
        value = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(value) or math.isinf(value) else value


def _sass(action, pc: int) -> str:
    try:
        return str(action.sass_by_pc(pc) or "")
    except Exception:  # older modules lack sass_by_pc; the opcode is only for the record
        return ""


def _names(source_name: str | Collection[str]) -> set[str]:
    return {source_name} if isinstance(source_name, str) else set(source_name)


def read_source_csv(text: str, source_name: str | Collection[str]) -> list[KernelProfile]:
    """Fallback: the `--page source --csv --print-source cuda` page, one row per CUDA line per kernel."""
    names = _names(source_name)
    default_file = source_name if isinstance(source_name, str) else ""
    kernels: list[KernelProfile] = []
    current: KernelProfile | None = None
    header: list[str] | None = None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        joined = ",".join(row)
        kernel_match = re.search(r"(?:Kernel|Function) Name:\s*([\w:]+)", joined)
        if kernel_match:
            current = KernelProfile(kernel_match.group(1).split("::")[-1], [], {})
            kernels.append(current)
            header = None
            continue
        lowered = [cell.strip().lower() for cell in row]
        if "source" in lowered and any(label in lowered for label in SOURCE_LABELS):
            header = lowered
            if current is None:
                current = KernelProfile("?", [], {})
                kernels.append(current)
            continue
        if header is None or current is None or len(row) != len(header):
            continue
        cells = dict(zip(header, row, strict=True))
        line_text = cells.get("line number") or cells.get("line") or cells.get("#") or cells.get("# line")
        file_text = cells.get("file name") or cells.get("file") or default_file
        if not line_text or not line_text.strip().isdigit() or Path(file_text).name not in names:
            continue
        values = {}
        for label, metric_name in SOURCE_LABELS.items():
            if label in cells:
                values[metric_name] = _number(cells[label])
        current.instructions.append(Instruction(int(line_text), values, file=Path(file_text).name))
    return kernels


def _number(cell: str) -> float:
    try:
        return float(cell.replace(",", "").strip() or 0)
    except ValueError:
        return 0.0


# ---------------------------------------------------------------- labels


def label_kernel(profile: KernelProfile, place: Callable[[Instruction], Hashable] = lambda ins: ins.line) -> dict:
    """The kernel's labels per line; `place` names an instruction's line (its number, or file and number
    where a kernel spans files)."""
    lines: dict = defaultdict(lambda: defaultdict(float))
    uncoalesced: dict = {}
    conflicts: dict = {}
    for ins in profile.instructions:
        v = ins.values
        where = place(ins)
        stats = lines[where]
        for key, value in v.items():
            if key not in CATEGORICAL_METRICS:
                stats[key] += value
        sectors = v.get("memory_l2_theoretical_sectors_global", 0.0)
        ideal = v.get("memory_l2_theoretical_sectors_global_ideal", 0.0)
        if sectors >= MIN_SECTORS and ideal > 0 and sectors / ideal >= UNCOALESCED_RATIO:
            uncoalesced[where] = max(uncoalesced.get(where, 0.0), sectors / ideal)
        wavefronts = v.get("memory_l1_wavefronts_shared", 0.0)
        ideal_wf = v.get("memory_l1_wavefronts_shared_ideal", 0.0)
        if ideal_wf > 0 and wavefronts / ideal_wf >= BANK_CONFLICT_RATIO:
            conflicts[where] = max(conflicts.get(where, 0.0), wavefronts / ideal_wf)

    divergent = _divergent_lines(lines)
    return {
        "labels": {
            "uncoalesced": sorted(uncoalesced),
            "bank_conflict": sorted(conflicts),
            "divergence": sorted(divergent),
        },
        "ratios": {
            "uncoalesced": {str(k): round(r, 3) for k, r in sorted(uncoalesced.items())},
            "bank_conflict": {str(k): round(r, 3) for k, r in sorted(conflicts.items())},
            "divergence": {str(k): round(r, 3) for k, r in sorted(divergent.items())},
        },
        "lines": {str(k): {m: round(x, 3) for m, x in sorted(s.items())} for k, s in sorted(lines.items())},
        "kernel_metrics": profile.metrics,
    }


def _divergent_lines(lines: dict[int, dict[str, float]]) -> dict[int, float]:
    """Line → its average active lanes, for the lines that count as divergent (see the module docstring)."""
    executed = {k: s.get("inst_executed", 0.0) for k, s in lines.items()}
    total = sum(executed.values())
    if total <= 0:
        return {}
    averages = {
        k: s.get("thread_inst_executed", 0.0) / executed[k] for k, s in lines.items() if executed[k] > 0
    }
    # The kernel's full-warp lane count, as its straight-line entry code shows it (32, or fewer for blocks
    # whose size is not a multiple of 32): the busiest lines are often the divergent ones themselves.
    baseline = max(averages.values()) if averages else 32.0
    divergent = {}
    for k, average in averages.items():
        idle_share = executed[k] * (1.0 - average / baseline) / total
        if average < DIVERGENCE_LANE_FRACTION * baseline and idle_share >= DIVERGENCE_MIN_SHARE:
            divergent[k] = average
    return divergent


# ---------------------------------------------------------------- sanitizers

_LOCATION = re.compile(r"([\w./+-]+\.(?:cu|cuh|h|hpp)):(\d+)")


def sanitize(binary: Path, tool: str, source: Path, timeout: float) -> dict:
    # A corpus file runs all its kernels in one process: with a print limit of 200 the first kernel's hazards
    # (races.cu: 253,953 errors) hid every later kernel's (measured on the H200, 2026-11-30).
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20000"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "all"]
    code, out = run([*cmd, str(binary)], timeout=timeout, cwd=binary.parent)
    return {"exit_code": code, "output": out, "hits": parse_sanitizer(out, source.name)}


def parse_sanitizer(output: str, source_name: str | Collection[str]) -> list[dict]:
    """Each reported problem: its kind (error/warning) and the source lines it names, in order.

    A racecheck hazard names two accesses (two lines of the report, `... at ... in file.cu:LINE`); a
    synccheck error names the barrier. Continuation lines (`=========     and Read access ...`) belong to
    the problem above them.
    """
    hits: list[dict] = []
    names = _names(source_name)
    for raw in output.splitlines():
        text = raw.strip("= \t")
        places = [(Path(f).name, int(n)) for f, n in _LOCATION.findall(text) if Path(f).name in names]
        lines = [n for _, n in places]
        starts = re.match(r"(Error|Warning|ERROR|WARNING|Barrier error|Race reported|Invalid)", text)
        if starts:
            kind = "warning" if starts.group(1).lower().startswith("warning") else "error"
            hits.append({"kind": kind, "message": text[:300], "lines": lines, "places": places})
        elif hits and lines and not re.match(r"(Saved host backtrace|Host Frame)", text):
            hits[-1]["lines"] += [n for n in lines if n not in hits[-1]["lines"]]
            hits[-1]["places"] += [p for p in places if p not in hits[-1]["places"]]
    return [h for h in hits if h["lines"]]


# ---------------------------------------------------------------- main


def relabel(path: Path) -> None:
    """Recompute the divergence labels of a measured truth.json from its stored per-line counters (after a
    change of the labelling rule, without another GPU run)."""
    truth = json.loads(path.read_text())
    for entry in truth["files"].values():
        for kernel in entry["kernels"].values():
            lines = {int(k): v for k, v in kernel.get("lines", {}).items()}
            divergent = _divergent_lines(lines)
            kernel.setdefault("labels", {})["divergence"] = sorted(divergent)
            kernel.setdefault("ratios", {})["divergence"] = {str(k): round(r, 3) for k, r in sorted(divergent.items())}
    truth["thresholds"]["divergence_baseline"] = "fullest line"
    truth["thresholds"]["divergence_min_share"] = DIVERGENCE_MIN_SHARE
    path.write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", HERE / "out")))
    parser.add_argument(
        "--work", type=Path, default=Path("/tmp/cudalens-accuracy"), help="binaries and .ncu-rep reports"
    )
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    parser.add_argument("--only", nargs="*", help="file stems to measure (default: the whole corpus)")
    parser.add_argument(
        "--ncu-jobs", type=int, default=1, help="ncu processes at once (source counters are exact counts either way)"
    )
    parser.add_argument("--ncu-timeout", type=float, default=120)
    parser.add_argument("--sanitizer-timeout", type=float, default=150)
    parser.add_argument(
        "--budget", type=float, default=480, help="seconds after which no further ncu run starts (truth is still written)"
    )
    parser.add_argument("--update", action="store_true", help="also write truth.json next to this script")
    parser.add_argument("--relabel", type=Path, help="recompute divergence labels of this truth.json and exit")
    parser.add_argument(
        "--expected-only", action="store_true", help="write truth.json with the intended labels only (no GPU)"
    )
    args = parser.parse_args(argv)
    if args.relabel:
        relabel(args.relabel)
        return 0
    if args.expected_only:
        files = {
            corpus.relative_name(p): {"expected": corpus.expected_labels(p.read_text()), "kernels": {}, "errors": []}
            for p in corpus.corpus_files()
            if p.parent.name == "kernels"
        }
        text = json.dumps({"version": 1, "measured": False, "files": files}, indent=1, sort_keys=True)
        (HERE / "truth.json").write_text(text + "\n")
        log(f"wrote the intended labels of {len(files)} files to truth.json")
        return 0

    started = time.monotonic()
    out: Path = args.out
    # Binaries and reports stay out of --out: only text (CSV pages, tool logs, truth.json) goes back.
    build_dir, report_dir, raw_dir = args.work / "build", args.work / "reports", out / "raw"
    for folder in (build_dir, report_dir, raw_dir):
        folder.mkdir(parents=True, exist_ok=True)
    sources = [p for p in corpus.corpus_files() if not args.only or p.stem in args.only]
    log(f"{len(sources)} corpus files")

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        builds = dict(zip(sources, pool.map(lambda s: build(s, build_dir, args.arch), sources), strict=True))
    for source, (binary, text) in builds.items():
        (raw_dir / f"{source.stem}.nvcc.txt").write_text(text)
        if binary is None:
            log(f"build failed: {source.name}")
    log(f"built in {time.monotonic() - started:.0f}s")

    ncu_report = import_ncu_report()
    log("reading reports with ncu_report" if ncu_report else "ncu_report unavailable: parsing the CSV source page")

    # Sanitizers run in the background while ncu profiles one binary at a time.
    sanitizer_pool = ThreadPoolExecutor(max_workers=max(1, min(8, args.jobs // 2)))
    export_pool = ThreadPoolExecutor(max_workers=2)
    sanitizer_jobs: dict[tuple[Path, str], Future] = {}
    for source, (binary, _) in builds.items():
        if binary is not None:
            for tool in ("racecheck", "synccheck"):
                sanitizer_jobs[source, tool] = sanitizer_pool.submit(
                    sanitize, binary, tool, source, args.sanitizer_timeout
                )

    def profile_job(source: Path, binary: Path) -> tuple[str | None, Path, float]:
        """Runs ncu on one binary; returns an error (or None), the report path and the seconds it took."""
        if time.monotonic() - started > args.budget:
            log(f"skipping ncu on {source.name}: budget of {args.budget:.0f}s spent")
            return "skipped: time budget spent", Path(), 0.0
        report = report_dir / f"{source.stem}.ncu-rep"
        t0 = time.monotonic()
        code, ncu_out = profile(binary, report, args.ncu_timeout)
        (raw_dir / f"{source.stem}.ncu.txt").write_text(ncu_out)
        if code != 0 or not report.exists():
            log(f"ncu failed on {source.name} (exit {code})")
            return f"ncu exit {code}", report, time.monotonic() - t0
        return None, report, time.monotonic() - t0

    ncu_pool = ThreadPoolExecutor(max_workers=max(1, args.ncu_jobs))
    ncu_jobs = {s: ncu_pool.submit(profile_job, s, b) for s, (b, _) in builds.items() if b is not None}
    files: dict[str, dict] = {}
    for source, (binary, _) in builds.items():
        text = source.read_text()
        entry: dict = {
            "expected": corpus.expected_labels(text) if source.parent.name == "kernels" else None,
            "kernels": {},
            "errors": [],
        }
        files[corpus.relative_name(source)] = entry
        if binary is None:
            entry["errors"].append("build failed")
            continue
        error, report, seconds = ncu_jobs[source].result()
        if error is not None:
            entry["errors"].append(error)
            continue
        # Reports are read here, one at a time: nothing says ncu_report may be used from several threads.
        pages = export_pool.submit(export_pages, report, raw_dir)
        try:
            profiles = read_report(ncu_report, report, source.name) if ncu_report is not None else []
            if not any(p.instructions for p in profiles):
                # No module, or nothing mapped to this file's lines through it: read the source page.
                page = pages.result()
                profiles = read_source_csv(page.get("source_cuda") or page.get("source", ""), source.name)
                entry["reader"] = "csv"
            (raw_dir / f"{source.stem}.instructions.json").write_text(
                json.dumps(
                    {p.name: [[i.line, i.sass, i.values] for i in p.instructions] for p in profiles}, indent=0
                )
            )
        except Exception as exc:  # one unreadable report must not cost the rest of the corpus
            entry["errors"].append(f"report unreadable: {exc!r}")
            log(f"could not read {report.name}: {exc!r}")
            continue
        for prof in profiles:
            entry["kernels"][prof.name] = label_kernel(prof)
        log(f"profiled {source.name}: {len(profiles)} launches, ncu {seconds:.0f}s")
    ncu_pool.shutdown()

    for (source, tool), job in sanitizer_jobs.items():
        result = job.result()
        (raw_dir / f"{source.stem}.{tool}.txt").write_text(result["output"])
        entry = files[corpus.relative_name(source)]
        spans = corpus.kernel_spans(source.read_text())
        category = "race" if tool == "racecheck" else "sync"
        for hit in result["hits"]:
            if hit["kind"] != "error" and not (tool == "racecheck" and "hazard" in hit["message"].lower()):
                continue
            kernel = corpus.kernel_at(spans, hit["lines"][0]) or "?"
            # Only the device lines of that kernel: a report may also name host frames of main().
            lines = [n for n in hit["lines"] if corpus.kernel_at(spans, n) == kernel]
            kernel_entry = entry["kernels"].setdefault(kernel, {"labels": {}})
            groups = kernel_entry.setdefault("labels", {}).setdefault(f"{category}_groups", [])
            if lines and lines not in groups:
                groups.append(lines)
        for kernel_entry in entry["kernels"].values():
            labels = kernel_entry.setdefault("labels", {})
            groups = labels.get(f"{category}_groups", [])
            labels[category] = sorted({n for group in groups for n in group})
        entry.setdefault("sanitizer_exit", {})[tool] = result["exit_code"]
    sanitizer_pool.shutdown()
    export_pool.shutdown()

    truth = {
        "version": 1,
        "measured": True,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], 30)[1].strip(),
        "ncu": run(["ncu", "--version"], 30)[1].strip().splitlines()[-1:],
        "reader": "ncu_report" if ncu_report else "csv",
        "thresholds": {
            "uncoalesced_sector_ratio": UNCOALESCED_RATIO,
            "bank_conflict_wavefront_ratio": BANK_CONFLICT_RATIO,
            "divergence_lane_fraction": DIVERGENCE_LANE_FRACTION,
            "divergence_min_share": DIVERGENCE_MIN_SHARE,
            "min_sectors": MIN_SECTORS,
        },
        "files": files,
    }
    text = json.dumps(truth, indent=1, sort_keys=True) + "\n"
    (out / "truth.json").write_text(text)
    if args.update:
        (HERE / "truth.json").write_text(text)
    # The device tool brings back a few files only: the raw counters and tool logs travel as one archive.
    shutil.make_archive(str(out / "raw"), "gztar", root_dir=out, base_dir="raw")
    shutil.rmtree(raw_dir, ignore_errors=True)
    failed = sum(1 for e in files.values() if e["errors"])
    log(f"done in {time.monotonic() - started:.0f}s: {len(files)} files, {failed} with errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
