"""profiler/jobs/ holds only what runs (the worker's jobs, the scripts run as programs), profiler/jobs_lib/ what
they load; the parent reaches both through job_modules."""

from __future__ import annotations

import ast
from pathlib import Path

from cudalens.profiler.job_modules import JOBS_DIR, JOBS_LIB_DIR, job_module, job_script

SCRIPTS = {"profile_target.py", "ncu_report_dump.py"}


def _defines_run(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == "run" for node in tree.body)


def _runs_as_main(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body)


def _modules(folder: Path) -> dict[str, ast.Module]:
    return {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in folder.glob("*.py") if p.name != "__init__.py"}


def test_the_jobs_folder_holds_jobs_and_scripts_only() -> None:
    misplaced = [
        name for name, tree in _modules(JOBS_DIR).items()
        if not (name.endswith("_job.py") and _defines_run(tree)) and not (name in SCRIPTS and _runs_as_main(tree))
    ]
    assert misplaced == []
    assert SCRIPTS <= set(_modules(JOBS_DIR))


def test_the_library_folder_holds_neither_jobs_nor_scripts() -> None:
    libraries = _modules(JOBS_LIB_DIR)
    assert {"jobkit.py", "harness_timing.py", "problem_loader.py"} <= set(libraries)
    assert [n for n, tree in libraries.items() if n.endswith("_job.py") or _runs_as_main(tree)] == []


def test_the_parent_loads_a_library_and_a_job_by_path() -> None:
    assert job_module("problem_loader").__file__ == str(JOBS_LIB_DIR / "problem_loader.py")
    test_job = job_module("test_job")
    assert test_job.__file__ == str(JOBS_DIR / "test_job.py") and callable(test_job.run)
    assert Path(job_script("profile_target")).is_file()
