"""The worker process: runs jobs one at a time for the parent that started it (`cudalens.worker.pool`).

Started as `python boot.py worker_main [--jobs-dir DIR]` under an interpreter that has torch but maybe not
cudalens (boot.py registers this folder as a package); the job modules are `jobs/<kind>_job.py`, or those of
DIR. See docs/profiler.md for the job-module contract.

The protocol channels are private duplicates of the original stdin and stdout; file descriptor 1 is pointed at
stderr and 0 at /dev/null, so that whatever a job prints or reads (Python or C, or a process it starts) cannot
corrupt them. The worker exits when its stdin closes, when it is
told to shut down, or when its parent process goes away; on the way out it kills its own process group (it
is the group leader) so that nothing a job started survives it.
"""

import inspect
import json
import os
import platform
import queue
import re
import signal
import sys
import threading
import time
import traceback

from . import protocol
from .lib import background as _background
from .lib import torch_install as _torch_install
from .lib.jobkit import load_by_path

_HERE = os.path.dirname(os.path.abspath(__file__))

# Text of an exception after which the CUDA context of this process cannot be used again.
_BROKEN_CONTEXT = re.compile(
    r"illegal memory access|unspecified launch failure|device-side assert|misaligned address|"
    r"illegal instruction|an illegal|CUDA error: (?:unknown error|launch timed out)|"
    r"cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS|context is destroyed|hardware stack error",
    re.IGNORECASE,
)
_KIND_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class _Channel:
    """The protocol's output: one JSON line per message, from any thread."""

    def __init__(self, fd):
        self._out = os.fdopen(fd, "w", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def send(self, message):
        line = protocol.encode(message)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()


class JobContext:
    """What a job's `run(payload, ctx)` may use."""

    def __init__(self, job_id, deadline, channel):
        self.job_id = job_id
        self.deadline = deadline
        self._channel = channel

    def progress(self, message, fraction=None, limit_s=None):
        """`limit_s`: the parent kills the job unless its next progress or its result comes within that many
        seconds (None: the request's own timeout applies again)."""
        self._channel.send(protocol.Progress(
            self.job_id, str(message), None if fraction is None else float(fraction),
            None if limit_s is None else float(limit_s),
        ))


class _JobModules:
    """The job modules of one folder, each loaded once per worker (again when its file changes)."""

    def __init__(self, folder):
        self.folder = folder
        self._loaded = {}
        self._lock = threading.Lock()  # a Prepare loads its job's module in the stdin reader's thread

    def _load(self, name, path):
        stamp = os.stat(path).st_mtime_ns
        with self._lock:
            cached = self._loaded.get(path)
            if cached and cached[0] == stamp:
                return cached[1]
            module = load_by_path(f"{__package__}.jobs.{name}", path, fresh=True)
            self._loaded[path] = (stamp, module)
            return module

    def job(self, kind):
        if not _KIND_NAME.match(kind):
            raise LookupError(f"bad job kind {kind!r}")
        path = os.path.join(self.folder, f"{kind}_job.py")
        if not os.path.isfile(path):
            raise LookupError(f"no job module for kind {kind!r} ({path} does not exist)")
        module = self._load(f"{kind}_job", path)
        if not callable(getattr(module, "run", None)):
            raise LookupError(f"{path} has no run(payload) function")
        return module


def _cuda_context_broken():
    """After a job that used CUDA through torch: does the context still work?"""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        if not torch.cuda.is_initialized():
            return False
        torch.cuda.synchronize()
    except Exception:
        return True
    return False


def run_job(request, channel, jobs):
    start = time.monotonic()
    broken = False
    try:
        module = jobs.job(request.kind)
        if not getattr(module, "BESIDE_WARM_UP", False):
            _background.wait()
        run = module.run
        try:
            takes_ctx = len(inspect.signature(run).parameters) >= 2
        except (TypeError, ValueError):
            takes_ctx = False
        payload = dict(request.payload)
        if takes_ctx:
            ctx = JobContext(request.id, start + request.timeout_s, channel)
            out = run(payload, ctx)
        else:
            out = run(payload)
        if not isinstance(out, dict):
            raise TypeError(f"{request.kind}_job.run returned {type(out).__name__}, not a dict")
        try:
            out = json.loads(json.dumps(out))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{request.kind}_job.run returned a value that is not JSON: {exc}") from None
        broken = bool(out.get("context_broken")) or _cuda_context_broken()
        status, error = "ok", None
    except Exception as exc:
        out = {}
        status, error = "error", traceback.format_exc()
        broken = bool(_BROKEN_CONTEXT.search(f"{type(exc).__name__}: {exc}")) or _cuda_context_broken()
    return protocol.JobResult(
        request.id, request.kind, status, out, error, time.monotonic() - start, context_broken=broken
    )


def _nvml_facts():
    """(driver version, first GPU name, GPU count) from NVML, which needs no CUDA context."""
    import ctypes

    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None, "no GPU", 0
    try:
        if nvml.nvmlInit_v2() != 0:
            return None, "no GPU", 0
        buf = ctypes.create_string_buffer(96)
        driver = buf.value.decode() if nvml.nvmlSystemGetDriverVersion(buf, 96) == 0 else None
        count = ctypes.c_uint(0)
        if nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0 or count.value == 0:
            return driver, "no GPU", 0
        handle = ctypes.c_void_p()
        name = "unknown GPU"
        if nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0:
            if nvml.nvmlDeviceGetName(handle, buf, 96) == 0:
                name = buf.value.decode(errors="replace")
        nvml.nvmlShutdown()
        return driver, name, count.value
    except (AttributeError, OSError):
        return None, "no GPU", 0


def hello():
    torch_version, torch_cuda = _torch_install.versions()  # without importing torch: that takes seconds
    driver, gpu, count = _nvml_facts()
    return protocol.Hello(
        protocol.PROTOCOL_VERSION,
        os.getpid(),
        platform.python_version(),
        sys.executable,
        torch_version,
        torch_cuda,
        driver,
        gpu,
        count,
    )


def _die(code):
    """Exit, taking every process this worker started with it."""
    try:
        if os.getpgid(0) == os.getpid():
            os.killpg(0, signal.SIGKILL)  # the group: this worker and all a job started
    finally:
        os._exit(code)


def _read_stdin(inbox, source, jobs):
    for raw in source:
        try:
            message = protocol.decode(raw)
        except protocol.ProtocolError as exc:
            message = protocol.Failure(f"worker: {exc}")  # answered in order, after the jobs before it
        if isinstance(message, protocol.Shutdown):
            os._exit(0)
        if isinstance(message, protocol.Prepare):
            threading.Thread(target=_prepare, args=(message, jobs), daemon=True, name=f"prepare {message.kind}").start()
            continue
        inbox.put(message)
    _die(0)  # the parent closed our stdin: it is gone or done with us


def _prepare(message, jobs):
    """A job's `prepare(payload)`, beside the job that runs now (protocol.Prepare). A hint: what it fails to do,
    the job does itself, so a failure is only written to stderr."""
    try:
        prepare = getattr(jobs.job(message.kind), "prepare", None)
        if callable(prepare):
            prepare(dict(message.payload))
    except Exception as exc:
        print(f"cudalens worker: preparing a {message.kind} job failed: {type(exc).__name__}: {str(exc)[:300]}",
              file=sys.stderr)


def _watch_parent(parent):
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            _die(0)


def main(argv):
    jobs_dir = os.path.join(_HERE, "jobs")
    if len(argv) >= 2 and argv[0] == "--jobs-dir":
        jobs_dir = argv[1]
    channel = _Channel(os.dup(1))
    os.dup2(2, 1)  # prints of jobs (Python and C alike) land in stderr, not in the protocol
    # Likewise the protocol's input: a job (or a process it starts) that reads stdin gets /dev/null.
    source = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    jobs = _JobModules(jobs_dir)
    inbox = queue.Queue()
    channel.send(hello())
    threading.Thread(target=_read_stdin, args=(inbox, source, jobs), daemon=True).start()
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    while True:
        message = inbox.get()
        if not isinstance(message, protocol.JobRequest):
            if not isinstance(message, protocol.Failure):
                message = protocol.Failure(f"worker: expected a job, got {type(message).__name__}")
            channel.send(message)
            _die(2)
        try:
            result = run_job(message, channel, jobs)
        except SystemExit as exc:
            # A job called sys.exit: leave the way it asked, but without interpreter finalisation, which
            # aborts while the stdin reader thread holds its buffer's lock.
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            sys.stderr.flush()
            os._exit(code)
        try:
            channel.send(result)
        except (TypeError, ValueError) as exc:
            channel.send(protocol.JobResult(message.id, message.kind, "error", {}, str(exc), result.duration_s))
        if result.context_broken:
            _die(0)
