"""Helpers shared by the profiler tests."""

from __future__ import annotations

import time

import pytest


def wait_gone(pid: int, wait_s: float = 10.0) -> bool:
    """True once `pid` has exited (a zombie waiting for init to reap it counts as gone)."""
    end = time.monotonic() + wait_s
    while True:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.05)


@pytest.fixture
def gone():
    return wait_gone
