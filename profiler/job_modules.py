"""The parent's door to the worker's files (plain files loaded by path, like the worker does): the jobs and
scripts in `profiler/jobs/` and their libraries in `profiler/jobs_lib/`."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import ModuleType

JOBS_DIR = Path(__file__).resolve().parent / "jobs"
JOBS_LIB_DIR = Path(__file__).resolve().parent / "jobs_lib"

_sibling = runpy.run_path(str(JOBS_LIB_DIR / "jobkit.py"))["sibling"]


def job_module(name: str) -> ModuleType:
    """A library of the jobs ("problem_loader": `jobs_lib/problem_loader.py`) or, for a name ending in `_job`, a
    job ("test_job": `jobs/test_job.py`), loaded once per process."""
    return _sibling(f"../jobs/{name}" if name.endswith("_job") else name)


def job_script(name: str) -> str:
    """The path of a job script run as its own process (under ncu or compute-sanitizer)."""
    return str(JOBS_DIR / f"{name}.py")
