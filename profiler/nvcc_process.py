"""Running nvcc so that it can be stopped: its own process group, a timeout, a cancel from another thread, and
no nvcc left running when this process exits."""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
from pathlib import Path


class CompileCancelled(Exception):
    """The compile was cancelled (a newer edit arrived); nothing was cached."""


class CancelToken:
    """Cancels a compile from another thread: the running nvcc's process group is killed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[str]] = set()
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            procs = list(self._procs)
        for proc in procs:
            _kill_group(proc)

    def _track(self, proc: subprocess.Popen[str]) -> bool:
        with self._lock:
            if self.cancelled:
                return False
            self._procs.add(proc)
            return True

    def _untrack(self, proc: subprocess.Popen[str]) -> None:
        with self._lock:
            self._procs.discard(proc)


_RUNNING: set[subprocess.Popen[str]] = set()  # every nvcc of this process, killed at exit


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@atexit.register
def _kill_running() -> None:
    for proc in list(_RUNNING):
        _kill_group(proc)


def run_nvcc(command: list[str], cwd: Path, timeout_s: float, cancel: CancelToken | None) -> tuple[int | None, str]:
    """(exit code or None on timeout, stderr + stdout); raises `CompileCancelled`."""
    proc = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, errors="replace", start_new_session=True,  # its own group: cicc/ptxas die with it
    )
    _RUNNING.add(proc)
    try:
        if cancel is not None and not cancel._track(proc):
            _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            return None, ""
    finally:
        _RUNNING.discard(proc)
        if cancel is not None:
            cancel._untrack(proc)
    if cancel is not None and cancel.cancelled:
        raise CompileCancelled
    return proc.returncode, err + out
