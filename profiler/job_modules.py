"""The parent's door to the job modules in `profiler/jobs/` (plain files loaded by path, like the worker does)."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import ModuleType

JOBS_DIR = Path(__file__).resolve().parent / "jobs"

_sibling = runpy.run_path(str(JOBS_DIR / "jobkit.py"))["sibling"]


def job_module(name: str) -> ModuleType:
    return _sibling(name)


def job_script(name: str) -> str:
    """The path of a job script run as its own process (under ncu or compute-sanitizer)."""
    return str(JOBS_DIR / f"{name}.py")
