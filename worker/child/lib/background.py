"""Warm-up work a worker does in threads beside its first jobs, and the wait for it.

The worker's warm-up starts, in a thread, what only jobs that launch work on the GPU need (the torch.profiler
session in which CUPTI starts: ≈ 2.8 s on the H200). A job marked `BESIDE_WARM_UP = True` runs beside it: the
`build` of a `.cu` file that just opened, and the `test` job, whose build and trials do and whose timing, which
opens a profiler session of its own, calls `wait` first. The worker makes every other job wait for it before it
starts (worker_main.run_job), so that no job meets a profiler session it did not open. Standard library only.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

_threads: list[threading.Thread] = []
seconds: dict[str, float] = {}  # what each finished part took
last_wait_s = 0.0  # how long the last `wait` waited: the job after it reports it


def start(name: str, work: Callable[[], None]) -> None:
    def run() -> None:
        began = time.perf_counter()
        try:
            work()
        except Exception as exc:  # e.g. no CUPTI: the job that needs it says so; the worker's stderr keeps why
            print(f"cudalens warm-up: {name} failed: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        else:
            seconds[name] = time.perf_counter() - began

    thread = threading.Thread(target=run, name=f"warm-up {name}", daemon=True)
    _threads.append(thread)
    thread.start()


def wait() -> float:
    """Joins every part still running; returns (and keeps in `last_wait_s`) the seconds that took."""
    global last_wait_s
    began = time.perf_counter()
    while _threads:
        _threads.pop().join()
    last_wait_s = time.perf_counter() - began
    return last_wait_s
