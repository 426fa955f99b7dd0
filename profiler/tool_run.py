"""Runs an external tool (ncu, compute-sanitizer, a helper interpreter) in its own process group with a
timeout; on timeout the whole group is killed, so nothing it started outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass


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
    try:
        out, err = proc.communicate(timeout=timeout)
        return ToolRun(tuple(command), proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return ToolRun(tuple(command), None, out or "", err or "", timed_out=True)
