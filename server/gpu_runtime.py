"""The server's one long-lived worker pool and what it knows about the GPU.

One `WorkerPool` per server: torch is imported (and the CUDA context opened) once, in the background, and a
retired worker is replaced at once (keep-warm), so a save after the first pays only for the test itself. The
pool is rebuilt when `worker.python` changes and killed with the server (`close`, also on a hard exit).
"""

from __future__ import annotations

import asyncio
import logging

from cudalens.profiler.gpu_specs import GpuFacts, NoGpu, detect_gpu
from cudalens.worker.child.protocol import JobRequest, JobResult
from cudalens.worker.pool import GPU_WARMUP, WorkerPool
from cudalens.worker.settings import WorkerSettings

logger = logging.getLogger("cudalens.server")

# How `WorkerPool` words a worker that never came up (a bad `worker.python`): not the user's kernel's fault.
_START_FAILURES = ("cannot start the worker", "the worker (", "the worker died while warming up")


def start_failure(outcome: JobResult) -> str | None:
    """Why the worker did not start, or None when the job ran (or the job itself crashed it)."""
    error = (outcome.error or "").strip()
    if outcome.status == "crash" and error.startswith(_START_FAILURES):
        return error.splitlines()[0]
    return None


class GpuRuntime:
    def __init__(self) -> None:
        self._pool: WorkerPool | None = None
        self._python: str | None = None
        self._gpu: GpuFacts | NoGpu | None = None
        self._closed = False

    def pool(self, settings: WorkerSettings) -> WorkerPool:
        """The pool for `settings.python`. The user's code runs there in the clean environment
        (profiler/child_env.py): no Coder API key, nothing named like a credential."""
        if self._pool is not None and self._python != settings.python:
            logger.info("worker.python is now %s: replacing the worker", settings.python)
            self._pool.close()
            self._pool = None
        if self._pool is None:
            self._pool = WorkerPool(python=settings.python, warmup=GPU_WARMUP, keep_warm=True)
            self._python = settings.python
        return self._pool

    def prestart(self, settings: WorkerSettings) -> None:
        """Start and warm a worker now, so the first save does not wait for torch to import."""
        if not self._closed:
            pool = self.pool(settings)
            if pool.handshake is None:
                pool.prestart()

    async def run(
        self, settings: WorkerSettings, kind: str, payload: dict, on_progress=None
    ) -> JobResult:
        """One job on the pool, off the event loop; cancelling the caller kills the job's process group."""
        pool = self.pool(settings)
        request = JobRequest(pool.new_id(), kind, payload, settings.timeout_seconds)
        relay = None if on_progress is None else (lambda p: on_progress(p.message, p.fraction))
        return await pool.run_async(request, relay)

    async def run_fresh(self, settings: WorkerSettings, kind: str, payload: dict) -> JobResult:
        """One job in a worker of its own, closed after it (a re-verification: nothing the pool's worker holds
        reaches it); cancelling the caller kills it."""
        pool = WorkerPool(python=settings.python)
        try:
            return await pool.run_async(JobRequest(pool.new_id(), kind, payload, settings.timeout_seconds))
        finally:
            pool.close()

    @property
    def known_gpu(self) -> GpuFacts | NoGpu | None:
        """The GPU once asked (`gpu`), None before: for what must not wait for nvidia-smi (a code lens)."""
        return self._gpu

    async def gpu(self) -> GpuFacts | NoGpu:
        """The first GPU (nvidia-smi, asked once, off the loop)."""
        if self._gpu is None:
            self._gpu = await asyncio.get_running_loop().run_in_executor(None, detect_gpu)
        return self._gpu

    def restart(self) -> None:
        """Replace the worker (its environment held a variable that is a secret now)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def close(self) -> None:
        """Kill the worker (for good)."""
        self._closed = True
        self.restart()


