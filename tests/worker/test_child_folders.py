"""worker/child/jobs/ holds only what runs (the worker's jobs, the programs run under ncu), worker/child/lib/ what
they import; the parent imports both as `cudalens.worker.child.*`."""

from __future__ import annotations

import ast
from pathlib import Path

from cudalens.worker.jobs import CHILD_DIR, JOBS_DIR, LIB_DIR, child_command

PROGRAMS = {"profile_target.py", "ncu_report_dump.py"}


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body)


def _modules(folder: Path) -> dict[str, ast.Module]:
    return {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in folder.glob("*.py") if p.name != "__init__.py"}


def test_the_jobs_folder_holds_jobs_and_programs_only() -> None:
    misplaced = [
        name for name, tree in _modules(JOBS_DIR).items()
        if not (name.endswith("_job.py") and _defines(tree, "run")) and not (name in PROGRAMS and _defines(tree, "main"))
    ]
    assert misplaced == []
    assert PROGRAMS <= set(_modules(JOBS_DIR))


def test_the_library_folder_holds_neither_jobs_nor_programs() -> None:
    libraries = _modules(LIB_DIR)
    assert {"jobkit.py", "harness_timing.py", "problem_loader.py"} <= set(libraries)
    assert [n for n, tree in libraries.items() if n.endswith("_job.py") or _defines(tree, "main")] == []


def test_the_parent_imports_the_childs_files_and_runs_its_programs_through_boot() -> None:
    from cudalens.worker.child.jobs import test_job
    from cudalens.worker.child.lib import problem_loader

    assert problem_loader.__file__ == str(LIB_DIR / "problem_loader.py")
    assert test_job.__file__ == str(JOBS_DIR / "test_job.py") and callable(test_job.run)
    python, boot, module, arg = child_command("python3", "jobs.profile_target", "x.json")
    assert (python, module, arg) == ("python3", "jobs.profile_target", "x.json") and boot == str(CHILD_DIR / "boot.py")
