"""A tool cudalens runs (nvcc, ncu, compute-sanitizer, nvidia-smi, cu++filt) is never found through a relative
PATH entry: `.` or `bin` in PATH is looked up from the current folder, which may be the repository just opened,
and its own `nvcc` would then run at the first compile (or its `nvidia-smi` when the server starts)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cudalens.profiler import processes
from cudalens.profiler.compile import find_nvcc
from cudalens.profiler.ncu.locate import find_tool


@pytest.fixture
def hostile_repo(tmp_path, monkeypatch) -> Path:
    for folder in (tmp_path, tmp_path / "bin"):
        folder.mkdir(exist_ok=True)
        for tool in ("nvcc", "ncu", "nvidia-smi", "cu++filt"):
            script = folder / tool
            script.write_text("#!/bin/sh\ntouch pwned\n")
            script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.pathsep.join([".", "bin", "", os.environ.get("PATH", "")]))
    return tmp_path


def test_relative_path_entries_are_not_searched(hostile_repo: Path):
    assert shutil.which("nvcc") is not None and Path(shutil.which("nvcc")).resolve().parent == hostile_repo  # the trap
    for tool in ("nvcc", "ncu", "nvidia-smi", "cu++filt"):
        found = processes.which(tool)
        assert found is None or not Path(found).resolve().is_relative_to(hostile_repo), tool


def test_the_tool_finders_skip_the_repositorys_tools(hostile_repo: Path):
    for found in (find_nvcc(), find_tool("ncu")):
        assert found is None or not Path(found).resolve().is_relative_to(hostile_repo)
