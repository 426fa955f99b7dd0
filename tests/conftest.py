"""Shared test configuration: the `gpu` marker skips with a reason where no NVIDIA GPU is present; how many
pytest-xdist workers `-n auto` (pyproject's addopts) starts; `gone(pid)`, for the tests of child processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest


def _gpu_present() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


GPU = _gpu_present()


def pytest_xdist_auto_num_workers(config) -> int:
    """Two workers, a test file on one (`--dist loadfile`: a module's fixtures, such as the Ray cluster or
    code-server, start once): 10:34 for the suite on CI's two cores against 15:52 on one. Where a GPU is present,
    none: two timings or two ncu runs sharing a GPU are both wrong. `-n N` on the command line overrides."""
    return 0 if GPU else min(2, os.cpu_count() or 1)


def pytest_collection_modifyitems(config, items):
    if GPU:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none found: nvidia-smi -L failed)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


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
