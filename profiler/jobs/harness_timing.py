"""Timing, after triton's `do_bench` and torch.utils.benchmark's `Measurement`.

A warm-up call and a sync first; the per-call cost is estimated from a few calls, and the budget in
milliseconds becomes a repetition count; events are allocated up front; before every repetition the L2 is
flushed by writing a buffer twice its size; one sync at the end. On a machine without CUDA the same logic
runs with `time.perf_counter` (how the tests exercise it). Standard library at top level.
"""

from __future__ import annotations

import runpy
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sibling = runpy.run_path(str(Path(__file__).with_name("jobkit.py")))["sibling"]
results = sibling("../results")

DEFAULT_BUDGET_MS = 100.0
MIN_REPS = 5
MAX_REPS = 1000
ESTIMATE_CALLS = 3
FALLBACK_L2_BYTES = 64 * 1024 * 1024
SUSPICIOUS_SPEEDUP = 10.0  # KernelBench's excessive_speedup_threshold


def repetitions(estimate_ms: float, budget_ms: float, min_reps: int = MIN_REPS, max_reps: int = MAX_REPS) -> int:
    """How many timed calls fit the budget, never fewer than `min_reps` nor more than `max_reps`."""
    if estimate_ms <= 0:
        return max_reps
    return max(min_reps, min(max_reps, int(budget_ms / estimate_ms)))


class _Clock:
    """perf_counter with the same shape as CUDA events, for machines without a GPU."""

    method = "perf-counter"

    def __init__(self) -> None:
        self.flush: Callable[[], None] = lambda: None

    def new_pair(self) -> list[float]:
        return [0.0, 0.0]

    def start(self, pair: list[float]) -> None:
        pair[0] = time.perf_counter()

    def stop(self, pair: list[float]) -> None:
        pair[1] = time.perf_counter()

    def sync(self) -> None:
        pass

    def elapsed_ms(self, pair: list[float]) -> float:
        return (pair[1] - pair[0]) * 1e3


class _CudaClock:
    method = "cuda-events"

    def __init__(self, device: Any, flush_l2: bool) -> None:
        import torch

        self.torch = torch
        self.device = device
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or FALLBACK_L2_BYTES
        self.buffer = torch.empty(2 * l2, dtype=torch.int8, device=device) if flush_l2 else None
        self.flush = self._flush if flush_l2 else (lambda: None)

    def _flush(self) -> None:
        self.buffer.zero_()

    def new_pair(self) -> tuple[Any, Any]:
        Event = self.torch.cuda.Event
        return (Event(enable_timing=True), Event(enable_timing=True))

    def start(self, pair: tuple[Any, Any]) -> None:
        pair[0].record()

    def stop(self, pair: tuple[Any, Any]) -> None:
        pair[1].record()

    def sync(self) -> None:
        self.torch.cuda.synchronize(self.device)

    def elapsed_ms(self, pair: tuple[Any, Any]) -> float:
        return pair[0].elapsed_time(pair[1])


def make_clock(device: str | None = None, flush_l2: bool = True) -> Any:
    try:
        import torch
    except ImportError:
        return _Clock()
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    return _CudaClock(dev, flush_l2) if dev.type == "cuda" else _Clock()


def measure(
    fn: Callable[[], Any],
    label: str,
    clock: Any,
    *,
    budget_ms: float = DEFAULT_BUDGET_MS,
    min_reps: int = MIN_REPS,
    max_reps: int = MAX_REPS,
) -> Any:
    """Times `fn()` (arguments bound by the caller, the same for reference and candidate): a `Measurement`."""
    fn()  # warm-up: lazy initialisation, autotuning, first-launch module loading
    clock.sync()
    probe = [clock.new_pair() for _ in range(ESTIMATE_CALLS)]
    for pair in probe:
        clock.flush()
        clock.start(pair)
        fn()
        clock.stop(pair)
    clock.sync()
    estimate = sorted(clock.elapsed_ms(p) for p in probe)[ESTIMATE_CALLS // 2]
    n = repetitions(estimate, budget_ms, min_reps, max_reps)
    pairs = [clock.new_pair() for _ in range(n)]  # up front: no allocation between timed calls
    for pair in pairs:
        clock.flush()
        clock.start(pair)
        fn()
        clock.stop(pair)
    clock.sync()
    samples = [clock.elapsed_ms(p) for p in pairs]
    flushed = clock.method == "cuda-events" and getattr(clock, "buffer", None) is not None
    return results.Measurement.from_samples(label, samples, clock.method, flushed)


def compare(
    candidate: Callable[..., Any],
    reference: Callable[..., Any],
    inputs: list[Any],
    *,
    device: str | None = None,
    budget_ms: float = DEFAULT_BUDGET_MS,
    compile_reference: bool = False,
    flush_l2: bool = True,
) -> Any:
    """Candidate vs eager reference (and `torch.compile(reference)` when asked), on the same inputs."""
    clock = make_clock(device, flush_l2)
    with _one_cpu_thread(clock):
        return _compare(candidate, reference, inputs, clock, budget_ms, compile_reference)


@contextmanager
def _one_cpu_thread(clock: Any) -> Iterator[None]:
    """CPU timings run on one thread: with torch's intra-op pool, a busy machine decided them (a one-line
    `x.sum(dim=1)` measured 8 ms against 0.01 ms while other processes ran on this 2-core machine)."""
    torch = sys.modules.get("torch")
    if clock.method == "cuda-events" or torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _compare(candidate: Callable[..., Any], reference: Callable[..., Any], inputs: list[Any], clock: Any,
             budget_ms: float, compile_reference: bool) -> Any:
    cand = measure(lambda: candidate(*inputs), "candidate", clock, budget_ms=budget_ms)
    ref = measure(lambda: reference(*inputs), "reference (eager)", clock, budget_ms=budget_ms)
    if cand.median and ref.median / cand.median > SUSPICIOUS_SPEEDUP:
        cand = results.Measurement(cand.label, cand.samples_ms, cand.method, cand.l2_flushed, (*cand.warnings, (
            f"{ref.median / cand.median:.0f}× faster than eager PyTorch: check that the kernel computes every "
            f"output (KernelBench flags speedups above {SUSPICIOUS_SPEEDUP:g}×)"
        )))
    compiled = None
    if compile_reference:
        import torch

        fast = torch.compile(reference)
        compiled = measure(lambda: fast(*inputs), "reference (torch.compile)", clock, budget_ms=budget_ms)
    return results.TimingResult(cand, ref, compiled)
