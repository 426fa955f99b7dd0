"""jobkit's `load_by_path`: the one way the worker, the jobs and the integration module load a file by path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cudalens.worker.child.lib.jobkit import load_by_path


def test_the_module_is_registered_while_it_runs_and_reused_after(tmp_path: Path) -> None:
    path = tmp_path / "point.py"
    path.write_text(
        "from __future__ import annotations\nimport dataclasses\nimport sys\n"
        "SEEN = __name__ in sys.modules\n"
        "@dataclasses.dataclass\nclass Point:\n    x: int\n"
    )
    module = load_by_path("_cudalens_test_point", path)
    assert module.SEEN and module.Point(1).x == 1  # dataclasses look the module up while the class is made
    assert load_by_path("_cudalens_test_point", path) is module
    path.write_text("SEEN = 'again'\n")
    assert load_by_path("_cudalens_test_point", path, fresh=True).SEEN == "again"


def test_source_runs_instead_of_the_file_and_tracebacks_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "reference.py"
    path.write_text("SIZE = 4096\n")
    assert load_by_path("_cudalens_test_reference", path, fresh=True, source="SIZE = 8\n").SIZE == 8
    with pytest.raises(ZeroDivisionError) as info:
        load_by_path("_cudalens_test_reference", path, fresh=True, source="1 / 0\n")
    assert info.traceback[-1].path == path


def test_a_file_that_fails_leaves_no_module_and_an_unknown_suffix_names_the_key(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import cudalens_no_such_module\n")
    with pytest.raises(ImportError) as info:
        load_by_path("_cudalens_test_broken", broken)
    assert info.value.name == "cudalens_no_such_module"
    assert "_cudalens_test_broken" not in sys.modules  # the next load runs it again, not a half-made module
    notes = tmp_path / "notes.txt"
    notes.write_text("x = 1\n")
    with pytest.raises(ImportError, match="cannot be loaded as Python") as info:
        load_by_path("_cudalens_test_notes", notes)
    assert info.value.name == "_cudalens_test_notes"

