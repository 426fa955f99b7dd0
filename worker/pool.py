"""The parent side of the worker: start it, send it jobs, and turn every way it can fail into a `JobResult`.

A `Worker` is one child process (`worker_main.py`, started by file path through `processes`: its own
process group, the clean environment, killed with everything else when this process leaves). A
`WorkerPool` runs jobs one at a time on a worker and replaces the worker after anything that may have left it
unusable: a timeout, a cancel, a crash, a protocol error or a broken CUDA context. Both have a blocking API;
`WorkerPool.run_async` wraps it for asyncio, and cancelling its task kills the job's whole process group.

The worker also exits by itself when its stdin closes or its parent goes away (this process was SIGKILLed).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cudalens.profiler import processes
from cudalens.worker.child.protocol import (
    Failure,
    Hello,
    JobRequest,
    JobResult,
    Prepare,
    Progress,
    ProtocolError,
    decode,
    encode,
    seconds_text,
)
from cudalens.worker.jobs import JOBS_DIR, child_command

logger = logging.getLogger("cudalens.profiler")
STDERR_TAIL_BYTES = 4000
# the warm-up of a worker with a GPU (the server's, an optimize run's): torch imported, the CUDA context made, and
# the fast builds' precompiled header started for the flags `.cu` files and `-O3` load_inline sources build with
# (worker/child/lib/fast_inline.py), so that the first save or round waits for none of them
GPU_WARMUP = {"modules": ["torch"], "cuda": True, "profiler": True, "precompile": ["-O3", "-lineinfo"]}
ProgressCallback = Callable[[Progress], None]

_EOF = object()


class WorkerStartError(RuntimeError):
    """The worker did not come up (bad interpreter, no handshake in time)."""


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "the worker closed its output but is still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker was killed by {name}"
    return f"the worker exited with code {code}"


@dataclass(frozen=True)
class WorkerSpec:
    """How to start a worker."""

    python: str | None = None  # the interpreter (the `worker.python` setting); None: this one
    jobs_dir: str | Path | None = None  # None: worker/child/jobs
    env: dict[str, str] | None = None  # added to the clean environment (`child_env`)
    startup_timeout_s: float = 60.0
    cwd: str | Path | None = None  # where jobs run; a scratch folder keeps untrusted code's relative writes out


class Worker:
    """One worker process. Not thread-safe for concurrent `run` calls (the pool serialises them)."""

    def __init__(self, spec: WorkerSpec | None = None) -> None:
        spec = spec or WorkerSpec()
        self.python = spec.python or sys.executable
        self.jobs_dir = Path(spec.jobs_dir or JOBS_DIR)
        self._env = {**(spec.env or {}), "PYTHONUNBUFFERED": "1"}
        self.startup_timeout_s = spec.startup_timeout_s
        self.cwd = spec.cwd
        self.hello: Hello | None = None
        self._child: processes.Child | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._inbox: queue.Queue[object] = queue.Queue()
        self._stderr = tempfile.TemporaryFile(mode="a+b")  # O_APPEND: truncating between jobs is safe
        self._cancelled = threading.Event()
        self._write_lock = threading.Lock()

    # -- life cycle --------------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Hello:
        """Start the process and wait for its handshake."""
        try:
            self._child = processes.start(
                child_command(self.python, "worker_main", "--jobs-dir", str(self.jobs_dir)),
                env=self._env, cwd=self.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                reap=True,
            )
        except OSError as exc:
            raise WorkerStartError(f"cannot start the worker with {self.python}: {exc}") from None
        self._proc = self._child.popen
        threading.Thread(target=self._read, args=(self._proc,), daemon=True, name="cudalens-worker-reader").start()
        message = self._next(time.monotonic() + self.startup_timeout_s)
        if not isinstance(message, Hello):
            detail = self._failure_text(message, "did not say hello in time")
            self.kill()
            raise WorkerStartError(f"the worker ({self.python}) {detail}")
        self.hello = message
        return message

    def kill(self) -> None:
        """SIGKILL the worker's whole process group and reap the worker."""
        proc = self._proc
        if proc is None or self._child is None:
            return
        self._child.kill()
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe:
                    pipe.close()
            except OSError:
                pass

    def close(self) -> None:
        self.kill()
        self._stderr.close()

    def cancel(self) -> None:
        """Stop the running job now; its `run` returns a `cancelled` result."""
        self._cancelled.set()
        self.kill()

    # -- jobs ------------------------------------------------------------------------------------------------

    def run(self, request: JobRequest, on_progress: ProgressCallback | None = None) -> JobResult:
        """Run one job; never raises for anything the job or the worker does."""
        if self.hello is None:
            try:
                self.start()
            except WorkerStartError as exc:
                return JobResult(request.id, request.kind, "crash", error=str(exc))
        start = time.monotonic()
        self._cancelled.clear()
        self._stderr.truncate(0)
        self._send(request)  # a dead worker: the reader reports EOF below
        end = deadline = start + request.timeout_s
        timeout_text = _timeout_text(request.timeout_s)
        while True:
            message = self._next(deadline)
            if self._cancelled.is_set():
                self.kill()
                return JobResult(request.id, request.kind, "cancelled", duration_s=time.monotonic() - start)
            if isinstance(message, Progress) and message.id == request.id:
                deadline, timeout_text = _stage_deadline(message, end, request.timeout_s)
            if isinstance(message, Progress):
                if on_progress is not None and message.id == request.id:
                    try:
                        on_progress(message)
                    except Exception:  # a broken progress display must not lose the job's result
                        on_progress = None
                continue
            if isinstance(message, JobResult) and message.id == request.id:
                if message.context_broken:
                    self.kill()
                return message
            # a timeout, the worker's end, a protocol error or a message out of place
            error = self._failure_text(message, timeout_text)
            self.kill()
            status = "timeout" if message is None else "crash"
            return JobResult(request.id, request.kind, status, error=error, duration_s=time.monotonic() - start)

    def prepare(self, kind: str, payload: dict) -> None:
        """Tell the worker a job of `kind` is coming (protocol.Prepare), while it runs another one (its warm-up)."""
        self._send(Prepare(kind, payload))  # a dead worker: the job itself finds out

    def _send(self, message: JobRequest | Prepare) -> None:
        """One line to the worker, from any thread; nothing where the worker is gone."""
        try:
            with self._write_lock:
                assert self._proc is not None and self._proc.stdin is not None
                self._proc.stdin.write((encode(message) + "\n").encode())
                self._proc.stdin.flush()
        except (OSError, ValueError):
            pass

    # -- internals -------------------------------------------------------------------------------------------

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        try:
            for raw in proc.stdout:
                try:
                    self._inbox.put(decode(raw))
                except ProtocolError as exc:
                    self._inbox.put(Failure(f"the worker sent a bad message: {exc}"))
        except (OSError, ValueError):
            pass
        self._inbox.put(_EOF)

    def _next(self, deadline: float) -> object | None:
        """The next message, `_EOF`, or None when the deadline passes first."""
        try:
            return self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None

    def _failure_text(self, message: object, timeout_text: str) -> str:
        if message is None:
            what = timeout_text
        elif message is _EOF:
            try:
                code = self._proc.wait(timeout=5) if self._proc else None
            except subprocess.TimeoutExpired:
                code = None
            what = _describe_exit(code)
        elif isinstance(message, Failure):
            what = f"protocol error: {message.message}"
        else:
            what = f"protocol error: unexpected {type(message).__name__} message"
        tail = self.stderr_tail()
        return f"{what}\n--- worker stderr (last lines) ---\n{tail}" if tail.strip() else what

    def stderr_tail(self, limit: int = STDERR_TAIL_BYTES) -> str:
        """The last bytes the worker wrote to stderr since the current job began."""
        try:
            size = os.fstat(self._stderr.fileno()).st_size
            data = os.pread(self._stderr.fileno(), limit, max(0, size - limit))
        except (OSError, ValueError):
            return ""
        return data.decode("utf-8", errors="replace")


def _timeout_text(timeout_s: float) -> str:
    return f"the job ran past its timeout of {timeout_s:g} s"


def _stage_deadline(progress: Progress, end: float, timeout_s: float) -> tuple[float, str]:
    """The deadline a progress message sets (its `limit_s` from now, never past the request's `end`) and what
    a timeout then says: the stage and its limit (a hung kernel is killed after its derived limit, not 600 s)."""
    stage_end = None if progress.limit_s is None else time.monotonic() + progress.limit_s
    if stage_end is None or stage_end >= end:
        return end, _timeout_text(timeout_s)
    return stage_end, f"{progress.message}: killed after {progress.limit_s:.3g} s"


class WorkerPool:
    """Runs jobs one at a time on a worker, with a fresh worker after anything that may have broken one."""

    def __init__(
        self,
        python: str | None = None,
        jobs_dir: str | Path | None = None,
        env: dict[str, str] | None = None,
        startup_timeout_s: float = 60.0,
        warmup: dict | None = None,
        keep_warm: bool = False,
        cwd: str | Path | None = None,
    ) -> None:
        """`warmup`: the payload of a `warmup` job run on every fresh worker before its first job (e.g.
        `{"modules": ["torch"], "cuda": True}` so that the first test does not pay for importing torch);
        `keep_warm`: start the replacement of a retired worker right away, in the background."""
        self.spec = WorkerSpec(python, jobs_dir, env, startup_timeout_s, cwd)
        self.warmup = warmup
        self.keep_warm = keep_warm
        self.warmup_result: JobResult | None = None
        self._closed = False
        self._worker: Worker | None = None
        self._lock = threading.Lock()  # one job at a time: there is one GPU
        self._state_lock = threading.Lock()
        self._running: tuple[str, Worker] | None = None
        # the worker being started and warmed up, and the jobs submitted meanwhile that it is told of once it is up
        self._warming: Worker | None = None
        self._to_prepare: list[JobRequest] = []
        self._cancelled: set[str] = set()
        self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cudalens-pool")
        self._ids = itertools.count(1)

    @property
    def handshake(self) -> Hello | None:
        """The running worker's handshake (None until a worker has started)."""
        return self._worker.hello if self._worker else None

    def new_id(self) -> str:
        return f"job-{os.getpid()}-{next(self._ids)}"

    def start(self) -> Hello:
        """Start a worker now (so the first job does not wait for it); raises `WorkerStartError`."""
        with self._lock:
            return self._ensure_worker().hello  # type: ignore[return-value]

    def prestart(self) -> None:
        """Start (and warm up) a worker in the background; a job submitted meanwhile waits for it."""
        threading.Thread(target=self._prestart, daemon=True, name="cudalens-pool-prestart").start()

    def _prestart(self) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self._ensure_worker()
            except WorkerStartError:
                self._retire(restart=False)  # the next job reports the reason

    def _ensure_worker(self) -> Worker:
        if self._worker is None or not self._worker.alive:
            if self._worker is not None:
                self._worker.close()
            worker = Worker(self.spec)
            self._worker = worker
            began = time.perf_counter()
            with self._state_lock:
                self._warming = worker
            try:
                worker.start()
                with self._state_lock:
                    waiting, self._to_prepare = self._to_prepare, []
                for request in waiting:
                    worker.prepare(request.kind, request.payload)
                if self.warmup is not None:
                    started = time.perf_counter() - began
                    self.warmup_result = worker.run(JobRequest(self.new_id(), "warmup", dict(self.warmup), 600.0))
                    if not worker.alive:
                        raise WorkerStartError(f"the worker died while warming up: {self.warmup_result.error}")
                    # what a first job waited for (the first save's split, docs/runtime.md)
                    logger.info("worker started in %.1f s, warm %.1f s later (%s)", started,
                                time.perf_counter() - began - started, seconds_text(self.warmup_result.payload))
            finally:
                with self._state_lock:
                    self._warming, self._to_prepare = None, []
        return self._worker

    def _prepare_while_warming(self, request: JobRequest) -> None:
        """A job submitted while a worker starts and warms up (torch's import, seconds): the worker is told of it
        (protocol.Prepare), so that its job module starts what it can beside the warm-up: a `.cu` file's build
        compiles its bindings and glue while torch imports (fast_inline.start_early). Not while a job runs: its
        timings must not share the CPU with compilers."""
        with self._state_lock:
            warming = self._warming
            if warming is None:
                return
            if warming.hello is None:
                self._to_prepare.append(request)
                return
        warming.prepare(request.kind, request.payload)

    def run(self, request: JobRequest, on_progress: ProgressCallback | None = None) -> JobResult:
        """Run one job and wait for its result; never raises for anything the job or the worker does."""
        cancelled = JobResult(request.id, request.kind, "cancelled")
        self._prepare_while_warming(request)
        while not self._lock.acquire(timeout=0.05):  # another job, or a worker warming up, holds it
            if self._take_cancel(request.id):
                return cancelled
        try:
            try:
                worker = self._ensure_worker()
            except WorkerStartError as exc:
                self._retire(restart=False)
                return JobResult(request.id, request.kind, "crash", error=str(exc))
            with self._state_lock:
                if request.id in self._cancelled:
                    self._cancelled.discard(request.id)
                    return cancelled
                self._running = (request.id, worker)
            try:
                result = worker.run(request, on_progress)
            finally:
                with self._state_lock:
                    self._running = None
                    self._cancelled.discard(request.id)
            if result.status not in ("ok", "error") or result.context_broken or not worker.alive:
                self._retire()
            return result
        finally:
            self._lock.release()

    def _take_cancel(self, job_id: str) -> bool:
        with self._state_lock:
            if job_id in self._cancelled:
                self._cancelled.discard(job_id)
                return True
            return False

    def cancel(self, job_id: str) -> bool:
        """Cancel a job: kill it if it runs (returns True), skip it if it waits (False)."""
        with self._state_lock:
            running = self._running
            if running and running[0] == job_id:
                running[1].cancel()
                return True
            self._cancelled.add(job_id)
            return False

    async def run_async(self, request: JobRequest, on_progress: ProgressCallback | None = None) -> JobResult:
        """`run` for asyncio: progress arrives on the loop's thread; cancelling the task kills the job."""
        loop = asyncio.get_running_loop()

        def report(progress: Progress) -> None:
            if on_progress is not None:
                loop.call_soon_threadsafe(on_progress, progress)

        future = loop.run_in_executor(self._executor, self.run, request, report)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            if self.cancel(request.id):
                await asyncio.wait([future])  # its worker is dead already: this returns at once
            raise

    def _retire(self, restart: bool = True) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
        if restart and self.keep_warm and not self._closed:
            self.prestart()

    def close(self) -> None:
        self._closed = True
        with self._state_lock:
            running = self._running
        if running:
            running[1].cancel()
        with self._lock:
            self._retire()
        self._executor.shutdown(wait=False)

