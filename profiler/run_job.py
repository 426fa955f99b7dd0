"""One door for running a job module: through the profiler's worker (its own process group, a timeout, a
fresh worker after a crash) when `cudalens.profiler.worker_client` is present, else in this process."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from cudalens.profiler.job_modules import job_module

_ids = itertools.count(1)


@dataclass(frozen=True)
class JobOutcome:
    status: Literal["ok", "error", "timeout", "crash", "cancelled"]
    payload: dict[str, Any]
    error: str | None = None
    context_broken: bool = False


def run_job(
    kind: str, payload: dict[str, Any], *, timeout_s: float = 600.0, python: str | None = None,
    on_progress: Callable[[str, float | None], None] | None = None,
) -> JobOutcome:
    try:
        from cudalens.profiler.protocol import JobRequest
        from cudalens.profiler.worker_client import WorkerPool
    except ImportError:
        return _in_process(kind, payload, on_progress)
    pool = WorkerPool(python=python)
    relay = None if on_progress is None else (lambda p: on_progress(p.message, p.fraction))
    try:
        request = JobRequest(id=str(next(_ids)), kind=kind, payload=payload, timeout_s=timeout_s)
        result = pool.run(request, on_progress=relay)
    except Exception as exc:  # the worker could not start (no such interpreter, no torch there...)
        return JobOutcome("error", {}, f"the worker did not start: {exc}")
    finally:
        pool.close()
    return JobOutcome(result.status, result.payload or {}, result.error, bool(getattr(result, "context_broken", False)))


class _Progress:
    def __init__(self, sink: Callable[[str, float | None], None] | None) -> None:
        self.sink = sink

    def progress(self, message: str, fraction: float | None = None) -> None:
        if self.sink:
            self.sink(message, fraction)

    def load_sibling(self, name: str) -> Any:
        return job_module(name)


def _in_process(kind: str, payload: dict[str, Any], on_progress: Any) -> JobOutcome:
    module = job_module(f"{kind}_job")
    try:
        with _stdout_to_stderr():  # build logs and prints of user code must not mix into --format json
            return JobOutcome("ok", module.run(payload, _Progress(on_progress)))
    except Exception:
        return JobOutcome("error", {}, traceback.format_exc())


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)  # the file descriptor too: compilers started by load_inline write to it directly
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
