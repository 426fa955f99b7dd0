"""Processes as /proc shows them, for tests that check what is running and what has gone (no lsptools here: the
VS Code end-to-end tests import it too)."""

from __future__ import annotations

import time
from pathlib import Path

WAIT_S = 60.0


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # exited; only its parent's wait() is missing


def wait_for(predicate, what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def _processes():
    """(pid, argv, parent pid) of every live process /proc shows."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if not gone(int(entry.name)):
                yield int(entry.name), argv, parent


def warm_servers(cache: Path) -> list[int]:
    """Every warm server whose socket is under `cache`, listening yet or not."""
    return [pid for pid, argv, _ in _processes()
            if b"cudalens.server.warm_start" in argv and any(a.startswith(str(cache).encode()) for a in argv)]


def warm_server(cache: Path) -> int | None:
    """The pid of the warm server whose socket is in `cache`, once it listens."""
    for sock in (cache / "cudalens" / "warm").glob("*.lsp.sock"):
        log = sock.with_suffix(".log")
        if log.is_file() and "ready" in log.read_text():
            for pid, argv, _ in _processes():
                if str(sock).encode() in argv:
                    return pid
    return None


def children(pid: int) -> list[int]:
    return [child for child, _, parent in _processes() if parent == pid]
