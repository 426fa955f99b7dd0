"""Builds the extensions of several files at once, each in its own process (the profile target with zero
calls), so that the slow cold `load_inline` builds overlap and later tests, timings and profiles find them
in torch's extension cache.

A search builds each candidate ahead of its GPU lease (agents/search/devices.py) with `BuildWorkers`: warm
workers that imported torch once and fork a child per candidate (worker/child/jobs/build_ahead_job.py), instead
of a Python start and torch's import (3-4 s on the H200) for each one."""

from __future__ import annotations

import contextlib
import json
import queue
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cudalens.profiler import processes
from cudalens.worker.child.protocol import JobRequest
from cudalens.worker.jobs import child_command
from cudalens.worker.pool import WorkerPool

# what a build worker imports before its first candidate: torch, and torch's extension builder with it
BUILD_WARMUP = {"modules": ["torch", "torch.utils.cpp_extension"]}


@dataclass(frozen=True)
class Build:
    path: str
    ok: bool
    seconds: float
    message: str = ""


def prebuild(paths: list[str], *, python: str = sys.executable, timeout: float = 600.0, workers: int = 8,
             cancel: processes.CancelToken | None = None) -> list[Build]:
    """`cancel` kills the builds in flight (`processes.Cancelled` is raised)."""

    def one(path: str) -> Build:
        with tempfile.TemporaryDirectory(prefix="cudalens-build-") as tmp:
            payload = Path(tmp) / "payload.json"
            payload.write_text(json.dumps({"path": str(Path(path).resolve()), "reps": 0}))
            start = time.monotonic()
            run = processes.run(child_command(python, "jobs.profile_target", str(payload)), timeout=timeout, cancel=cancel)
            tail = run.output.strip().splitlines()[-1] if run.output.strip() else ""
            return Build(path, run.returncode == 0, time.monotonic() - start, "timed out" if run.timed_out else tail)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, paths))


def prebuild_source(source: str, *, python: str = sys.executable, timeout: float = 600.0,
                    cancel: processes.CancelToken | None = None) -> Build:
    """`prebuild` of a source that is not a file yet (a search's candidate), from a scratch folder of its own."""
    with tempfile.TemporaryDirectory(prefix="cudalens-build-ahead-") as folder:
        path = Path(folder) / "candidate.py"
        path.write_text(source, encoding="utf-8")
        [build] = prebuild([str(path)], python=python, timeout=timeout, workers=1, cancel=cancel)
    return build


class BuildWorkers:
    """`count` warm build workers (each imports torch in the background as it starts); `build_source` takes the
    first free one. Each is a `WorkerPool` (the clean environment plus `env`, its own process group, a crashed
    or timed-out worker replaced at once) whose `build_ahead` job forks a child per candidate, so one candidate's
    code never runs in the process that builds the next. `close()` ends them."""

    def __init__(self, count: int, *, python: str = sys.executable, timeout: float = 600.0,
                 env: dict[str, str] | None = None, start: bool = True) -> None:
        """`start`: start every worker now (else each at its first build)."""
        self.timeout = timeout
        self.pools = [WorkerPool(python=python, env=env, warmup=BUILD_WARMUP, keep_warm=True)
                      for _ in range(max(1, count))]
        self._free: queue.Queue[WorkerPool] = queue.Queue()
        for pool in self.pools:
            if start:
                pool.prestart()
            self._free.put(pool)

    def build_source(self, source: str, cancel: processes.CancelToken | None = None) -> Build:
        """`prebuild_source` in a warm worker: the build's verdict and seconds (its wait for a worker included);
        `cancel` kills it (`processes.Cancelled` is raised)."""
        start = time.monotonic()
        pool = self._free.get()
        try:
            with tempfile.TemporaryDirectory(prefix="cudalens-build-ahead-") as folder:
                path = Path(folder) / "candidate.py"
                path.write_text(source, encoding="utf-8")
                job = _Job(pool, pool.new_id())
                with cancel.watching(job) if cancel is not None else contextlib.nullcontext():
                    result = pool.run(JobRequest(job.id, "build_ahead", {"path": str(path)}, self.timeout))
        finally:
            self._free.put(pool)
        out = result.payload or {}
        if result.status != "ok":
            tail = (result.error or result.status).strip().splitlines()
            return Build(str(path), False, time.monotonic() - start, tail[-1] if tail else result.status)
        return Build(str(path), bool(out.get("ok")), time.monotonic() - start, str(out.get("message", "")))

    def close(self) -> None:
        for pool in self.pools:
            pool.close()


@dataclass(frozen=True)
class _Job:
    """A job of a pool, as `CancelToken.watching` kills a child: `kill()` cancels it (its worker's group dies)."""

    pool: WorkerPool
    id: str

    def kill(self) -> None:
        self.pool.cancel(self.id)
