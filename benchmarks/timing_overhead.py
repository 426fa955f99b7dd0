"""Where a timed call's time goes beside its kernels (issue 13, hole 5): on 25_Swish at 4096×393216 fp32 the
candidate's timed call took 9.48 ms median while ncu measured its kernel at 4.37 ms.

    python benchmarks/timing_overhead.py [--rows 4096 --cols 393216] [--skip-job]

Prints, for the honest swish candidate (benchmarks/swish_cases.py) and the eager reference:
  1. the harness's measurement (CUDA events, L2 flushed) and `kernel_ms` (torch.profiler), in a fresh state;
  2. the same calls taken apart: without the L2 flush; the host's time of a call (an implicit sync shows as a
     host time close to the GPU time); the kernel writing into a preallocated output (no allocation in the
     timed region); `torch.empty_like(x)` alone; the first and last samples (a trend is throttling);
  3. the caching allocator's counters over the timed repetitions (cudaMalloc/cudaFree calls, retries after an
     out-of-memory, reserved bytes): an allocation that reaches the driver inside the timed region shows here;
  4. (1) again after a full correctness test (5 trials, as the `test` job runs before it times), whose
     blocks the allocator keeps;
  5. the `test` job itself with --time (unless --skip-job): its call_ms, kernel_ms and interval.
One line per figure, `name: value` — meant to be read next to ncu's kernel time. Needs a GPU (~2 min).
"""

from __future__ import annotations

import argparse
import runpy
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ALLOCATOR_COUNTERS = ("num_device_alloc", "num_device_free", "num_alloc_retries", "num_ooms",
                      "reserved_bytes.all.current", "active_bytes.all.peak")


def say(name: str, value: object) -> None:
    print(f"{name}: {value}", flush=True)


def allocator(torch) -> dict[str, float]:
    stats = torch.cuda.memory_stats()
    return {k: stats.get(k, float("nan")) for k in ALLOCATOR_COUNTERS}


def allocator_delta(torch, before: dict[str, float]) -> str:
    after = allocator(torch)
    parts = []
    for k in ALLOCATOR_COUNTERS:
        if k.endswith(("current", "peak")):
            parts.append(f"{k}={after[k] / 2**30:.2f} GiB")
        else:
            parts.append(f"{k}+={after[k] - before[k]:g}")
    return ", ".join(parts)


def harness_side(timing, fn, label, clock, torch) -> None:
    before = allocator(torch)
    calls = timing.Calls.fixed(fn)
    m = timing.with_kernel_time(timing.measure(calls, label, clock), calls, clock)
    lo, hi = m.interval
    say(f"{label} call_ms", f"{m.median:.4g} [{lo:.4g}–{hi:.4g}] n={len(m.samples_ms)} IQR {m.spread:.1%}")
    say(f"{label} kernel_ms", "unavailable" if m.kernel_ms is None else f"{m.kernel_ms:.4g}")
    say(f"{label} kernels", "; ".join(f"{name[:70]} {ms:.4g} ms" for name, ms in m.kernels[:4]) or "-")
    say(f"{label} first / last 5 samples", " ".join(f"{s:.4g}" for s in m.samples_ms[:5]) + " / "
        + " ".join(f"{s:.4g}" for s in m.samples_ms[-5:]))  # a trend: clocks or memory throttling
    say(f"{label} allocator over timing", allocator_delta(torch, before))
    for w in m.warnings:
        say(f"{label} warning", w)


def host_ms(fn, torch, n: int = 10) -> tuple[float, float]:
    """(host ms of the call alone, ms until the GPU finished): a host time near the GPU time is a sync."""
    host, total = [], []
    for _ in range(n):
        torch.cuda.synchronize()
        began = time.perf_counter()
        fn()
        host.append((time.perf_counter() - began) * 1e3)
        torch.cuda.synchronize()
        total.append((time.perf_counter() - began) * 1e3)
    return statistics.median(host), statistics.median(total)


def events_ms(fn, torch, flush=None, n: int = 20) -> float:
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for start, stop in pairs:
        if flush is not None:
            flush()
        start.record()
        fn()
        stop.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in pairs)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=393216)
    parser.add_argument("--skip-job", action="store_true", help="leave out the test job (5)")
    args = parser.parse_args()

    import torch

    from cudalens.worker.child.jobs import test_job
    from cudalens.worker.child.lib import harness_correctness, harness_timing, problem_loader

    if not torch.cuda.is_available():
        print("timing_overhead.py needs a GPU", file=sys.stderr)
        return 2
    timing, correctness, loader = harness_timing, harness_correctness, problem_loader
    swish_file = runpy.run_path(str(ROOT / "benchmarks" / "swish_cases.py"))["swish_file"]
    folder = Path(tempfile.mkdtemp(prefix="cudalens-timing-overhead-"))
    path = folder / "swish.py"
    path.write_text(swish_file(args.rows, args.cols, "honest"))
    say("gpu", torch.cuda.get_device_name(0))
    say("shape", f"{args.rows}×{args.cols} fp32, {args.rows * args.cols * 4 / 1e9:.2f} GB per tensor")

    began = time.perf_counter()
    problem = loader.load_problem({"path": str(path)})
    say("build s", f"{time.perf_counter() - began:.1f}")
    dev = torch.device("cuda")
    module = loader.load_module(path)  # the same module: its extension, for the preallocated variant
    candidate = correctness.place(problem.make_candidate(), dev, None)
    reference = correctness.place(problem.make_reference(), dev, None)
    torch.manual_seed(42)
    inputs = correctness.make_inputs(problem.get_inputs, dev)
    x = inputs[0]
    out = torch.empty_like(x)
    clock = timing.make_clock("cuda")
    cand = lambda: candidate(x)  # noqa: E731
    ref = lambda: reference(x)  # noqa: E731

    with torch.no_grad():
        print("--- 1. the harness, fresh", flush=True)
        harness_side(timing, cand, "candidate", clock, torch)
        harness_side(timing, ref, "reference", clock, torch)

        print("--- 2. the candidate's call taken apart (median of 20, ms)", flush=True)
        say("events, L2 flushed", f"{events_ms(cand, torch, clock.flush):.4g}")
        say("events, no flush", f"{events_ms(cand, torch):.4g}")
        say("events, preallocated output (ext.swish_out), flushed",
            f"{events_ms(lambda: module.ext.swish_out(x, out), torch, clock.flush):.4g}")
        say("events, torch.empty_like(x) alone", f"{events_ms(lambda: torch.empty_like(x), torch):.4g}")
        h, total = host_ms(cand, torch)
        say("host ms of the call / until the GPU is done", f"{h:.4g} / {total:.4g}")
        h, total = host_ms(ref, torch)
        say("reference host ms / until done", f"{h:.4g} / {total:.4g}")

        print("--- 4. after a correctness test of 5 trials (the job's order)", flush=True)
        began = time.perf_counter()
        test = correctness.check(problem.make_reference, problem.make_candidate, problem.get_inputs)
        say("correctness", f"{test.status} in {time.perf_counter() - began:.1f} s; allocator "
            f"{allocator_delta(torch, allocator(torch))}")
        harness_side(timing, cand, "candidate after test", clock, torch)
        harness_side(timing, ref, "reference after test", clock, torch)
        torch.cuda.empty_cache()
        harness_side(timing, cand, "candidate after test + empty_cache", clock, torch)

    if not args.skip_job:
        print("--- 5. the test job", flush=True)
        del inputs, x, out, candidate, reference
        torch.cuda.empty_cache()
        from cudalens.worker.child.results import TimingResult

        began = time.perf_counter()
        result = test_job.run({"path": str(path), "time": True})
        say("job s", f"{time.perf_counter() - began:.1f}")
        say("job test", result["test"]["status"] + " " + result["test"]["message"])
        if result.get("timing"):
            t = TimingResult.from_json(result["timing"])
            for m in (t.candidate, t.reference):
                say(f"job {m.label}", m.describe())
            say("job speedup", t.describe_speedup())
    return 0


if __name__ == "__main__":
    sys.exit(main())
