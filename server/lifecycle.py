"""Being a good citizen: the server watches its editor and exits with it, never writes to stdout except
protocol messages, logs to the editor (window/logMessage) and a file, and takes its children with it.

pygls does not watch the parent process, and its default error reporting shows a pop-up per failure; both
are handled here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import logging.handlers
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types

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


class Children:
    """Process groups started by the server (nvcc, the worker...): all are killed when the server exits."""

    def __init__(self) -> None:
        self._groups: set[int] = set()
        self._lock = threading.Lock()

    def spawn(self, args: list[str], **kwargs: Any) -> subprocess.Popen:
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        kwargs.setdefault("stdout", subprocess.PIPE)  # never our stdout: that is the protocol stream
        proc = subprocess.Popen(args, start_new_session=True, **kwargs)
        self.adopt(proc.pid)
        return proc

    def adopt(self, pgid: int) -> None:
        """Register a process group started elsewhere (with `start_new_session=True`)."""
        with self._lock:
            self._groups.add(pgid)

    def release(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def kill_all(self, grace_s: float = 0.5) -> None:
        with self._lock:
            groups, self._groups = set(self._groups), set()
        for pgid in groups:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while groups and time.monotonic() < deadline:
            groups = {g for g in groups if _group_alive(g)}
            time.sleep(0.02)
        for pgid in groups:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    return True


CHILDREN = Children()
_AT_EXIT: list[Callable[[], None]] = []


def at_exit(cleanup: Callable[[], None]) -> None:
    """Run `cleanup` when the server leaves (shutdown, exit, or its editor's death): stop worker pools."""
    _AT_EXIT.append(cleanup)


def run_cleanups() -> None:
    while _AT_EXIT:
        try:
            _AT_EXIT.pop()()
        except Exception:
            logger.exception("a cleanup failed while exiting")


def hard_exit(code: int) -> None:
    """Leave now: kill our children, flush the logs, and skip waiting for threads (a thread blocked reading
    stdin, or an analysis of a huge file, must not keep the process alive)."""
    run_cleanups()
    CHILDREN.kill_all()
    logging.shutdown()
    os._exit(code)


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


def default_log_file() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cudalens" / "server.log"


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


def set_level(level: str) -> None:
    logging.getLogger("cudalens").setLevel(_LEVELS.get(level, logging.INFO))
