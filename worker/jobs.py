"""Where the child's files are, for the parent: the command that runs one of them as a program (the worker, the
profile target under ncu or compute-sanitizer), the jobs' folder, the file the integration module copies."""

from __future__ import annotations

from pathlib import Path

CHILD_DIR = Path(__file__).resolve().parent / "child"
JOBS_DIR = CHILD_DIR / "jobs"
LIB_DIR = CHILD_DIR / "lib"


def child_command(python: str, module: str, *args: str) -> list[str]:
    """`python boot.py MODULE ARGS...`: the child's `MODULE.main(ARGS)` ("worker_main", "jobs.profile_target") as a
    program of `python`, which may lack cudalens (worker/child/boot.py)."""
    return [python, str(CHILD_DIR / "boot.py"), module, *args]
