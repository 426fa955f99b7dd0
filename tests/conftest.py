"""Shared test configuration: the `gpu` marker skips with a reason where no NVIDIA GPU is present."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def _gpu_present() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


GPU = _gpu_present()


def pytest_collection_modifyitems(config, items):
    if GPU:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none found: nvidia-smi -L failed)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
