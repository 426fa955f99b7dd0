"""Timing, after triton's `do_bench` and torch.utils.benchmark's `Measurement`.

What is timed is a `Calls`: a function and where each call's inputs come from. For the test, every call gets a
fresh draw of the inputs (a new object at a new address, drawn outside the timed region: kernelbot's fix,
gpu-mode/kernelbot#501), and some timed calls — the last of each batch and one chosen at random, which the
candidate cannot foresee — have their outputs compared with the reference's on the same inputs: a candidate that
computes while it is tested and skips its work, or replays a result remembered for an input, while it is timed,
fails (`TimedCallWrong`). Every output the timing reports a time for could have been the checked one.

A warm-up call and a sync first; the per-call cost is estimated from a few calls, and the budget in
milliseconds becomes the first batch of repetitions; events are allocated up front for each batch; before every
repetition the L2 is flushed by writing a buffer twice its size; one sync at the end of each batch. Batches
continue (doubling) until the median's 95 % confidence interval is within ±2 % of it, or the cap (10 × the
budget, 1000 repetitions) comes first, which the measurement's warnings then say. Once, outside the timed
repetitions, torch.profiler measures the device time of the kernels a call launches (`kernel_ms`, beside the
events' `call_ms`). On a machine without CUDA the same logic runs with `time.perf_counter` (how the tests
exercise it). Standard library at top level.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from .. import results

DEFAULT_BUDGET_MS = 100.0  # the first batch of repetitions
CAP_FACTOR = 10.0  # repetitions stop at budget × this much sampled time, converged or not
MIN_REPS = 10  # 6 samples or fewer have no interval narrower than their range
MAX_REPS = 1000
ESTIMATE_CALLS = 3
KERNEL_CALLS = 3  # calls profiled for `kernel_ms`, each alone in a profiler session after a flush; their median
# (one call on the H200 read a 0.28 ms Swish 7 % above the events' median: one sample is one noisy sample)
FALLBACK_L2_BYTES = 64 * 1024 * 1024
# a call whose events take this much longer than its kernels is reported (allocation, host work, syncs)
OVERHEAD_SHARE = 0.2
OVERHEAD_MIN_MS = 0.05


class TimedCallWrong(Exception):
    """A checked timed call's outputs (or its inputs after it) differ from what the reference gives on the same
    inputs: the candidate behaved one way while it was tested and another while it was timed."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(message)
        self.check = check  # the anti-cheat check it fails: "timed-output-wrong" or "inputs-modified"
        self.message = message


class Calls:
    """What a timing calls, one call at a time: `fn(*draw(k))` for call k. With `check`, `check(k, args, out)`
    runs after some calls (outside the timed region) and raises `TimedCallWrong`. The previous call's inputs are
    still held while the next are drawn, so that no two calls in a row see the same address."""

    def __init__(self, fn: Callable[..., Any], draw: Callable[[int], list[Any]] | None = None,
                 check: Callable[[int, list[Any], Any], None] | None = None) -> None:
        self.fn = fn
        self.draw = draw or (lambda k: [])
        self.check = check
        self.made = 0  # calls made so far: the next call's k
        self.checked = 0
        self._held: list[Any] = []
        self._choice = random.SystemRandom()  # not the candidate's to predict or reseed

    @classmethod
    def fixed(cls, fn: Callable[[], Any]) -> Calls:
        """The same call every time (a whole model on its recorded arguments)."""
        return cls(lambda: fn())

    def chosen(self, n: int) -> set[int]:
        """Which of a batch's `n` calls are checked: the last and one at random (none without `check`)."""
        return {n - 1, self._choice.randrange(n)} if self.check is not None and n else set()

    def inputs(self) -> list[Any]:
        """The next call's inputs (the previous call's are let go only now)."""
        args = self.draw(self.made)
        self._held = args
        return args

    def after(self, args: list[Any], out: Any, check: bool) -> None:
        if check and self.check is not None:
            self.check(self.made, args, out)
            self.checked += 1
        self.made += 1

    def once(self) -> Any:
        """One untimed call (the warm-up), its output checked as it was when the call returned."""
        args = self.inputs()
        out = snapshot(self.fn(*args))
        self.after(args, out, True)
        return out


def snapshot(out: Any) -> Any:
    """A copy of a call's outputs, made on the current stream right after the call (after its stop event, so the
    copy is not timed): what the timing saw. Work a candidate leaves to another stream or thread, to finish its
    outputs after the timer stopped, is missing from the copy, so the check sees it."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, (list, tuple)):
        return [snapshot(o) for o in out]
    if isinstance(out, dict):
        return {k: snapshot(v) for k, v in out.items()}
    return out


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
    calls: Calls | Callable[[], Any],
    label: str,
    clock: Any,
    *,
    budget_ms: float = DEFAULT_BUDGET_MS,
    max_ms: float | None = None,
    min_reps: int = MIN_REPS,
    max_reps: int = MAX_REPS,
    target: float | None = None,
) -> Any:
    """Times `calls` (a plain function: the same call every time): a `Measurement`. Repeats until the median's
    interval is within ±`target` (default ±2 %), `max_ms` of samples (default 10 × `budget_ms`) or `max_reps`."""
    calls = calls if isinstance(calls, Calls) else Calls.fixed(calls)
    target = results.INTERVAL_TARGET if target is None else target
    max_ms = budget_ms * CAP_FACTOR if max_ms is None else max_ms
    calls.once()  # warm-up: lazy initialisation, autotuning, first-launch module loading
    clock.sync()
    estimate = statistics.median(_timed(calls, clock, ESTIMATE_CALLS))
    samples = _timed(calls, clock, repetitions(estimate, budget_ms, min_reps, max_reps))
    while len(samples) < max_reps and sum(samples) < max_ms:
        lo, hi = results.median_interval(samples)
        median = statistics.median(samples)
        if median <= 0 or (hi - lo) / 2 <= target * median:
            break
        room = int((max_ms - sum(samples)) / max(median, 1e-6))
        samples += _timed(calls, clock, max(1, min(len(samples), max_reps - len(samples), room)))
    flushed = clock.method == "cuda-events" and getattr(clock, "buffer", None) is not None
    return results.Measurement.from_samples(label, samples, clock.method, flushed)


def _timed(calls: Calls, clock: Any, n: int) -> list[float]:
    """n timed calls on fresh inputs, the L2 flushed before each (after the inputs were drawn); events allocated
    up front, one sync after the last — and one after each checked call, outside its events."""
    pairs = [clock.new_pair() for _ in range(n)]  # up front: no allocation between timed calls
    checked = calls.chosen(n)
    for i, pair in enumerate(pairs):
        args = calls.inputs()
        clock.flush()
        clock.start(pair)
        out = calls.fn(*args)
        clock.stop(pair)
        if i in checked:
            out = snapshot(out)
        calls.after(args, out, i in checked)
        del out
    clock.sync()
    return [clock.elapsed_ms(p) for p in pairs]


def kernel_time(calls: Calls, clock: Any, repeat: int = KERNEL_CALLS) -> tuple[float | None, tuple, str]:
    """(kernel_ms, kernels, why not): the device time of the kernels, copies and memsets one call launches
    (median over `repeat` calls, each on fresh inputs alone in a torch.profiler session after a flush and a sync,
    the last one's outputs checked), the kernels of the last one by name, longest first. (None, (), reason) where
    CUDA or the profiler is missing."""
    if clock.method != "cuda-events":
        return None, (), ""
    try:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
    except ImportError as exc:
        return None, (), f"kernel time unavailable: {exc}"
    totals, by_name = [], {}
    try:
        for i in range(repeat):
            args = calls.inputs()
            clock.flush()
            clock.sync()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                out = calls.fn(*args)
                clock.sync()
            calls.after(args, out, i == repeat - 1)
            del out
            device = [e for e in prof.events()
                      if e.device_type == DeviceType.CUDA and not getattr(e, "is_user_annotation", False)]
            by_name = {}
            for e in device:
                by_name[e.name] = by_name.get(e.name, 0.0) + e.time_range.elapsed_us() / 1e3
            totals.append(sum(by_name.values()))
    except TimedCallWrong:
        raise
    except Exception as exc:  # a profiler that cannot start (CUPTI in use by ncu, ...): the call time stands
        return None, (), f"kernel time unavailable: {type(exc).__name__}: {str(exc)[:200]}"
    if not any(totals):
        return None, (), "kernel time unavailable: torch.profiler saw no kernels (CUPTI unavailable?)"
    kernels = tuple(sorted(((name, ms) for name, ms in by_name.items()), key=lambda k: -k[1]))
    return statistics.median(totals), kernels, ""


def with_kernel_time(m: Any, calls: Calls, clock: Any) -> Any:
    """The measurement with `kernel_ms`, and a warning when the call takes much longer than its kernels."""
    kernel_ms, kernels, why = kernel_time(calls, clock)
    warnings = list(m.warnings) + ([why] if why else [])
    if kernel_ms is not None:
        outside = m.median - kernel_ms
        if outside > max(OVERHEAD_MIN_MS, OVERHEAD_SHARE * kernel_ms):
            warnings.append(
                f"the call takes {m.median:.4g} ms, its kernels {kernel_ms:.4g} ms: {outside:.4g} ms of each call "
                "is outside its kernels (allocation, host work or a synchronization the GPU waits for)"
            )
    return replace(m, kernel_ms=kernel_ms, kernels=kernels, warnings=tuple(warnings))


def measure_limit_s(call_limit: Any, max_ms: float) -> float:
    """How long timing one side may take when each call may take `call_limit`: the warm-up, the probes and the
    profiled calls at that limit, then the repetitions' cap twice over."""
    return call_limit.limit_s * (1 + ESTIMATE_CALLS + KERNEL_CALLS) + 2 * max_ms / 1e3


def compare(
    candidate: Callable[..., Any],
    reference: Callable[..., Any],
    draw: Callable[[int], list[Any]],
    *,
    check: Callable[[int, list[Any], Any], None] | None = None,
    device: str | None = None,
    budget_ms: float = DEFAULT_BUDGET_MS,
    compile_reference: bool = False,
    flush_l2: bool = True,
    call_limit: Any = None,
    watch: Callable[[str, float | None], None] | None = None,
    reference_first: bool = False,
    reference_draw: Callable[[int], list[Any]] | None = None,
) -> Any:
    """Candidate vs eager reference (and `torch.compile(reference)` when asked), call k of the candidate on the
    inputs `draw(k)`, of the reference on `reference_draw(k)` (default: the same): the same shapes and
    distribution; the test draws the two sides apart, so that neither times values the other has seen.
    `check(k, args, out)` after the candidate's chosen calls (`Calls`). `watch(stage, limit_s)` as in the correctness harness: the candidate's timing under a limit derived
    from `call_limit` (the reference's measured call), the reference's under the job's own. `reference_first`:
    the reference is timed before the candidate (a re-verification times them in the other order)."""
    clock = make_clock(device, flush_l2)
    watch = watch or (lambda stage, limit_s: None)
    with _one_cpu_thread(clock):
        return _compare(candidate, reference, draw, reference_draw or draw, check, clock, budget_ms,
                        compile_reference, call_limit, watch, reference_first)


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


def _compare(candidate: Callable[..., Any], reference: Callable[..., Any], draw: Callable[[int], list[Any]],
             reference_draw: Callable[[int], list[Any]], check: Any, clock: Any, budget_ms: float, compile_reference: bool, call_limit: Any,
             watch: Callable[..., None], reference_first: bool) -> Any:
    def side(calls: Calls, label: str) -> Any:
        return with_kernel_time(measure(calls, label, clock, budget_ms=budget_ms), calls, clock)

    def time_candidate() -> Any:
        if call_limit is not None:
            limit = measure_limit_s(call_limit, budget_ms * CAP_FACTOR)
            watch(f"timing the candidate, limit {limit:.3g} s (a call: {call_limit.describe()})", limit)
        try:
            return side(checked, "candidate")
        finally:
            watch("timing the reference", None)

    checked = Calls(candidate, draw, check)
    if reference_first:
        ref = side(Calls(reference, reference_draw), "reference (eager)")
        cand = time_candidate()
    else:
        cand = time_candidate()
        ref = side(Calls(reference, reference_draw), "reference (eager)")
    compiled = None
    if compile_reference:
        import torch

        compiled = side(Calls(torch.compile(reference), reference_draw), "reference (torch.compile)")
    return results.TimingResult(cand, ref, compiled, checked_calls=checked.checked)
