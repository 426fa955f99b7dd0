"""Being a good citizen: the server watches its editor and exits with it, never writes to stdout except
protocol messages, logs to the editor (window/logMessage) and a file, and takes its children with it.

Every way out ends in `hard_exit`, which kills every child (profiler/processes.py holds them all) before
anything else and then leaves without waiting for threads: the `exit` notification, end of file on stdin (the
editor closed the pipe), the editor's death (`watch_parent` polls the `processId` of initialize: pygls does not
watch it), SIGTERM, SIGHUP and SIGINT (`exit_on_signals`). A thread stuck on a child (a compile, an `nvcc
--version` that hangs) therefore never keeps the server alive: its child dies first.

pygls's default error reporting shows a pop-up per failure; that is handled here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import logging.handlers
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from lsprotocol import types

from cudalens.profiler import processes
from cudalens.workspace.user_cache import cache_home

logger = logging.getLogger("cudalens.server")

PARENT_POLL_SECONDS = 1.0
_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    except OSError:
        return False
    return True


async def watch_parent(pid: int, on_gone: Callable[[], None], interval: float = PARENT_POLL_SECONDS) -> None:
    """Calls `on_gone` once the editor process `pid` has died. An unreaped editor still answers kill(0), so a
    change of our own parent (we were re-parented) also counts when the editor was our parent."""
    was_parent = pid == os.getppid()
    while True:
        await asyncio.sleep(interval)
        if not pid_alive(pid) or (was_parent and os.getppid() != pid):
            logger.info("the editor (pid %d) is gone; exiting", pid)
            on_gone()
            return


_AT_EXIT: list[Callable[[], None]] = []
_EXIT_CODE: list[int] = []  # what hard_exit leaves with, once it is called
CLEANUP_GRACE_S = 2.0  # what the cleanups get after the children are dead; then the process leaves anyway
EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def exit_code() -> int:
    """The code `hard_exit` is leaving with (1 before it was called): for a cleanup that reports it."""
    return _EXIT_CODE[0] if _EXIT_CODE else 1


def at_exit(cleanup: Callable[[], None]) -> None:
    """Run `cleanup` when the server leaves (shutdown, exit, or its editor's death): stop worker pools, remove
    scratch folders. Its children are dead by then."""
    _AT_EXIT.append(cleanup)


def run_cleanups() -> None:
    while _AT_EXIT:
        try:
            _AT_EXIT.pop()()
        except Exception:
            logger.exception("a cleanup failed while exiting")


def hard_exit(code: int) -> None:
    """Leave now: kill every child (and start no more), run the cleanups for at most `CLEANUP_GRACE_S`, flush
    the logs, and skip waiting for threads (a thread blocked reading stdin, an analysis of a huge file, a
    cleanup waiting on a lock must not keep the process alive). Safe from any thread and a signal handler."""
    _EXIT_CODE.append(code)
    processes.close()
    cleanups = threading.Thread(target=run_cleanups, daemon=True, name="cudalens-exit")
    cleanups.start()
    cleanups.join(CLEANUP_GRACE_S)
    processes.close()  # anything a cleanup started
    with contextlib.suppress(Exception):
        logging.shutdown()
    os._exit(code)


def exit_on_signals() -> None:
    """SIGTERM, SIGHUP (the terminal or the editor went away) and SIGINT end the server through `hard_exit`,
    with 128 + the signal's number; Python's defaults would leave its children running (SIGTERM, SIGHUP) or
    wait for every thread, a compile's included (SIGINT). Call from the main thread."""
    for sig in EXIT_SIGNALS:
        signal.signal(sig, lambda number, _frame: hard_exit(128 + number))


class ExitAtEof:
    """The server's stdin, for pygls: end of file means the editor closed the pipe (or died), and the server
    leaves at once through `hard_exit` (exit code 0 after a `shutdown` request, else 1) rather than through
    asyncio's shutdown, which waits for every thread of its executor, a hanging compile's included."""

    def __init__(self, stream: BinaryIO, shut_down: Callable[[], bool]) -> None:
        self._stream = stream
        self._shut_down = shut_down

    def _checked(self, data: bytes) -> bytes:
        if not data:
            logger.info("end of file on stdin: the editor is gone; exiting")
            hard_exit(0 if self._shut_down() else 1)
        return data

    def read1(self, size: int = -1) -> bytes:
        """What is there, up to `size` bytes (transport.py reads chunks: `read` would wait for all of them)."""
        data = self._stream.read1(size)
        return self._checked(data) if size != 0 else data

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        return self._checked(data) if size != 0 else data


def protect_stdout() -> BinaryIO:
    """The protocol stream, with fd 1 pointed at stderr: a stray print (ours, a library's, a child's) cannot
    corrupt the LSP messages."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol_out


class EditorLogHandler(logging.Handler):
    """Forwards log records to the editor as window/logMessage, from any thread."""

    _TYPES = {
        logging.ERROR: types.MessageType.Error,
        logging.WARNING: types.MessageType.Warning,
        logging.INFO: types.MessageType.Info,
    }

    def __init__(self, send: Callable[[types.LogMessageParams], None], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._send = send
        self._loop = loop
        self._busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._busy, "on", False):
            return  # sending logs something itself: don't loop
        kind = self._TYPES.get(record.levelno, types.MessageType.Log)
        params = types.LogMessageParams(kind, self.format(record))
        try:
            self._loop.call_soon_threadsafe(self._deliver, params)
        except RuntimeError:
            pass  # the loop is closed: we are exiting

    def _deliver(self, params: types.LogMessageParams) -> None:
        self._busy.on = True
        try:
            self._send(params)
        except Exception:
            pass
        finally:
            self._busy.on = False


def settle_heap() -> None:
    """Once the first diagnostics are out (app.after_first_diagnostics): collect the start-up's
    garbage once, freeze what is left (the loaded code, pygls, lsprotocol, analysis caches) out of later walks, and
    collect less often from then on: every keystroke allocates thousands of short-lived objects (syntax nodes,
    findings, JSON), and with CPython's default thresholds the collections that follow walk the whole long-lived
    heap. benchmarks/server_latency.py on the 2-core machine, edit → diagnostics median: 26–30 ms with these
    against 32–47 ms with the defaults in quiet runs. Does nothing where the collector was not switched off for the
    start (`cudalens serve` switches it off before its imports)."""
    if gc.isenabled():
        return
    began = time.perf_counter()
    collected = gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    gc.enable()
    logger.info("start-up garbage collected: %d objects in %.0f ms; %d frozen", collected,
                (time.perf_counter() - began) * 1000, gc.get_freeze_count())


def default_log_file() -> Path:
    return cache_home() / "server.log"


def setup_logging(log_file: str | None, level: str = "info") -> None:
    """Our records go to stderr (editors keep it in their LSP log) and a rotating log file."""
    root = logging.getLogger("cudalens")
    root.setLevel(_LEVELS.get(level, logging.INFO))
    root.propagate = False
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(fmt)
    stderr.setLevel(logging.WARNING)
    handlers: list[logging.Handler] = [stderr]
    path = Path(log_file) if log_file else default_log_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        file = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=1, encoding="utf-8")
        file.setFormatter(fmt)
        handlers.append(file)
    except OSError as exc:
        print(f"cudalens: cannot write the log file {path}: {exc}", file=sys.stderr)
    for handler in handlers:
        root.addHandler(handler)
        logging.getLogger("pygls").addHandler(handler)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    root.addHandler(_EARLY)


class _EarlyRecords(logging.Handler):
    """What we log before the editor can be told (the start, before `initialize`): kept, the first 100, and told
    once it can (`log_to_editor`)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) < 100:
            self.records.append(record)


_EARLY = _EarlyRecords()


def log_to_editor(handler: EditorLogHandler) -> None:
    """From now on our records go to the editor too, those logged before it could be told first."""
    root = logging.getLogger("cudalens")
    with _EARLY.lock:
        root.addHandler(handler)
        root.removeHandler(_EARLY)
        early, _EARLY.records = _EARLY.records, []
    for record in early:
        if record.levelno >= handler.level:
            handler.handle(record)


def set_level(level: str) -> None:
    logging.getLogger("cudalens").setLevel(_LEVELS.get(level, logging.INFO))
