"""`cudalens profile FILE [--kernel NAME]`: Nsight Compute over the file's kernels (per-kernel metrics and
per-line hints, CL904) and, on request, compute-sanitizer (CL905). Exit 0 without findings, 1 with."""

from __future__ import annotations

import argparse
import json
import sys

from cudalens.cli.gpu_options import add_common_arguments, existing_file
from cudalens.cli.progress import StageProgress
from cudalens.profiler.gpu_specs import NoGpu, detect_gpu
from cudalens.profiler.ncu import metrics as M
from cudalens.profiler.ncu.line_hints import line_findings
from cudalens.profiler.ncu.profile import ProfileRequest, profile_file
from cudalens.profiler.run_findings import no_gpu_message
from cudalens.profiler.sanitizer import TOOLS, run_sanitizer, sanitizer_findings
from cudalens.worker.child.results import KernelMetrics

# (label, metric, format) of the per-kernel summary
SUMMARY = (
    ("time", M.DURATION, "{:.1f} us", 1e-3),
    ("SM", M.SM_THROUGHPUT, "{:.0f}%", 1),
    ("memory", M.MEMORY_THROUGHPUT, "{:.0f}%", 1),
    ("DRAM", M.DRAM_THROUGHPUT, "{:.0f}%", 1),
    ("occupancy", M.ACHIEVED_OCCUPANCY, "{:.0f}%", 1),
    ("theoretical", M.THEORETICAL_OCCUPANCY, "{:.0f}%", 1),
    ("registers", M.REGISTERS, "{:.0f}", 1),
    ("L1 hit", M.L1_HIT_RATE, "{:.0f}%", 1),
    ("L2 hit", M.L2_HIT_RATE, "{:.0f}%", 1),
    ("threads/inst", M.THREADS_PER_INST, "{:.1f}", 1),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .cu with a reference or a KernelBench .py with ModelNew")
    parser.add_argument("--kernel", action="append", default=[], help="profile only this kernel (repeatable)")
    parser.add_argument("--sanitizer", action="append", default=[], choices=TOOLS, help="also run compute-sanitizer")
    parser.add_argument("--no-ncu", action="store_true", help="skip Nsight Compute (sanitizer only)")
    parser.add_argument("--no-cache", action="store_true", help="profile even when the source is unchanged")
    add_common_arguments(parser, timeout=300.0)


def run(args: argparse.Namespace) -> int:
    path = existing_file("profile", args.file)
    if path is None:
        return 2
    if isinstance(gpu := detect_gpu(), NoGpu):  # before looking for ncu: the editor's words, once
        print(no_gpu_message("profiling", path.name, gpu.reason), file=sys.stderr)
        return 2
    text = path.read_text(encoding="utf-8", errors="replace")
    progress = StageProgress(f"profile {path.name}")
    profile = None
    findings = []
    sanitized = []
    try:
        if not args.no_ncu:
            progress("Nsight Compute", 0.1)
            profile = profile_file(ProfileRequest(
                path=str(path.resolve()), reference=args.reference, kernels=tuple(args.kernel),
                python=args.python, timeout=args.timeout, use_cache=not args.no_cache,
            ))
            findings += line_findings(str(path), text, profile.lines)
        for i, tool in enumerate(args.sanitizer):
            progress(f"compute-sanitizer {tool}", 0.5 + 0.5 * i / len(args.sanitizer))
            result = run_sanitizer(str(path.resolve()), tool, reference=args.reference, python=args.python, timeout=args.timeout)
            sanitized.append(result)
            findings += sanitizer_findings(str(path), text, result.issues)
    finally:
        progress.clear()
    if args.format == "json":
        print(json.dumps({
            "version": 1,
            "profile": None if profile is None else profile.to_json(),
            "sanitizer": [s.to_json() for s in sanitized],
            "findings": [f.to_json() for f in findings],
        }, indent=2))
    else:
        print(render(str(path), profile, sanitized, findings))
    failed = (profile is not None and profile.error) or any(s.error for s in sanitized)
    return 1 if findings or failed else 0


def metrics_summary(k: KernelMetrics) -> str:
    parts = []
    for label, metric, fmt, scale in SUMMARY:
        value = k.get(metric)
        if value is not None:
            parts.append(f"{label} {fmt.format(value * scale)}")
    return f"{k.base_name}: " + ", ".join(parts)


def render(path: str, profile, sanitized, findings) -> str:
    lines = []
    if profile is not None:
        if profile.error:
            lines.append(f"{path}: ncu: {profile.error}")
        for k in profile.kernels:
            lines.append("  " + metrics_summary(k))
        for w in profile.warnings:
            lines.append(f"  warning: {w}")
    for s in sanitized:  # what was run (inputs, reduced or not; time) with what it found
        lines.append(f"{path}: {s.describe()}" + ("" if s.error else f", {len(s.issues)} issue(s)"))
    for f in findings:
        lines.append(f"{f.path}:{f.span.line}:{f.span.column}: {f.code} {f.message}")
    return "\n".join(lines)
