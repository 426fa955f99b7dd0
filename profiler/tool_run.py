"""Runs an external tool (ncu, compute-sanitizer, a helper interpreter) in its own process group with a
timeout; on timeout the whole group is killed, so nothing it started outlives it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass

# Every tool this process is running: a server cancelling a profile, or exiting, kills them (`kill_running`).
_RUNNING: set[subprocess.Popen] = set()
_LOCK = threading.Lock()


@dataclass(frozen=True)
class ToolRun:
    command: tuple[str, ...]
    returncode: int | None  # None: killed on timeout
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def output(self) -> str:
        return self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr


def run_tool(
    command: list[str], *, timeout: float, env: dict[str, str] | None = None, cwd: str | None = None
) -> ToolRun:
    try:
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            text=True, errors="replace", env=env, cwd=cwd, start_new_session=True,
        )
    except OSError as exc:
        return ToolRun(tuple(command), 127, "", f"{command[0]}: {exc.strerror or exc}")
    with tracked(proc):
        try:
            out, err = proc.communicate(timeout=timeout)
            return ToolRun(tuple(command), proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            out, err = proc.communicate()
            return ToolRun(tuple(command), None, out or "", err or "", timed_out=True)


@contextlib.contextmanager
def tracked(proc: subprocess.Popen) -> Iterator[None]:
    """While the block runs, `kill_running` (a cancel, the server's exit) kills `proc`'s group."""
    with _LOCK:
        _RUNNING.add(proc)
    try:
        yield
    finally:
        with _LOCK:
            _RUNNING.discard(proc)


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_running() -> None:
    """Kill every running tool's process group (its `run_tool` then returns what the tool had written)."""
    with _LOCK:
        procs = list(_RUNNING)
    for proc in procs:
        kill_group(proc)
