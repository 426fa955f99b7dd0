"""Looking at real process trees from a test: who is alive, who are a process's descendants, and a stand-in
nvcc whose compiles (and, if asked, whose `--version`) hang, recording the pids of itself and of the child it
starts (as nvcc starts cicc and ptxas)."""

from __future__ import annotations

import os
import time
from pathlib import Path

WAIT_S = 60.0  # guards against a hang only: not a speed assertion


def state(pid: int) -> str | None:
    """The process's state letter, None when it no longer exists."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def gone(pid: int) -> bool:
    """Exited: no process, or a zombie only its parent's wait() is missing (a dead parent's are reaped by init)."""
    return state(pid) in (None, "Z", "X")


def zombie(pid: int) -> bool:
    return state(pid) == "Z"


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def descendants(pid: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (ppid := parent_of(int(entry))) is not None:
            parents[int(entry)] = ppid
    found, frontier = [], {pid}
    while frontier:
        frontier = {child for child, ppid in parents.items() if ppid in frontier}
        found += sorted(frontier)
    return found


def wait_for(predicate, what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


FAKE_NVCC = """#!/bin/sh
# a stand-in for nvcc: records its pid and its child's, then hangs (a compile; `--version` too if asked)
if [ "$1" = "--version" ] && [ -z "{hang_version}" ]; then
    echo "Cuda compilation tools, release 13.0, V13.0.0"
    exit 0
fi
echo $$ >> {pids}
sleep 600 &
echo $! >> {pids}
wait
"""


def fake_nvcc(folder: Path, hang_version: bool = False) -> tuple[Path, Path]:
    """(its folder, for PATH; the file its pids land in)."""
    folder.mkdir(parents=True, exist_ok=True)
    pids = folder / "pids.txt"
    nvcc = folder / "nvcc"
    nvcc.write_text(FAKE_NVCC.format(hang_version="yes" if hang_version else "", pids=pids))
    nvcc.chmod(0o755)
    return folder, pids


def recorded(pids: Path) -> list[int]:
    try:
        return [int(line) for line in pids.read_text().split()]
    except (OSError, ValueError):
        return []
