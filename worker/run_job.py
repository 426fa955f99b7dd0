"""One door for running a job module from the CLI: a fresh worker (its own process group, a timeout, a crash
or a broken CUDA context turned into a result), used for one job and closed. The server keeps its own
long-lived `WorkerPool` instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cudalens.worker.child.protocol import JobRequest, JobResult
from cudalens.worker.pool import WorkerPool


def run_job(
    kind: str, payload: dict[str, Any], *, timeout_s: float = 600.0, python: str | None = None,
    on_progress: Callable[[str, float | None], None] | None = None, cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> JobResult:
    """`cwd`: where the job runs (default: here); `env`: added to the worker's clean environment."""
    pool = WorkerPool(python=python, cwd=cwd, env=env)
    relay = None if on_progress is None else (lambda p: on_progress(p.message, p.fraction))
    try:
        request = JobRequest(id=pool.new_id(), kind=kind, payload=payload, timeout_s=timeout_s)
        result = pool.run(request, on_progress=relay)
    except Exception as exc:  # the worker could not start (no such interpreter, no torch there...)
        return JobResult("", kind, "error", error=f"the worker did not start: {exc}")
    finally:
        pool.close()
    return result
