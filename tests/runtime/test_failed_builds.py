"""Sources that failed to build are not compiled again: the second load raises the first one's compiler output
at once, while other sources, other compilers and failures that may not repeat build as before. Real
`load_inline` (torch's, through the loader's content-addressed builds) and the real g++."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from cudalens.worker.child.lib import failed_builds as failed
from cudalens.worker.child.lib import fast_inline as fast
from cudalens.worker.child.lib import problem_loader as loader

BROKEN = "int broken(int x) { return x +; }"


@pytest.fixture
def caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "torch_extensions"))
    return tmp_path


def _load(source: str) -> None:
    from torch.utils import cpp_extension

    with loader.content_addressed_builds():
        # no torch header: the compiler reaches the error in well under a second
        cpp_extension.load_inline("broken", source, functions=["broken"], no_implicit_headers=True)


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_a_second_load_of_sources_that_failed_raises_the_same_compiler_output_without_compiling(caches: Path) -> None:
    pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as first:
        _load(BROKEN)
    assert "Error building extension" in str(first.value) and "expected primary-expression" in str(first.value)
    fast.LOG.clear()
    began = time.perf_counter()
    with pytest.raises(RuntimeError) as second:
        _load(BROKEN)
    assert time.perf_counter() - began < 1.0
    assert str(second.value) == f"{first.value}\n{failed.NOTE}"
    assert fast.LOG == ["failed before broken: not compiled again"]

    with pytest.raises(RuntimeError):  # an edit is other sources: compiled (and failing) afresh
        _load(BROKEN.replace("x +;", "x + ;"))
    assert not any(line.startswith("failed before") for line in fast.LOG[1:])


def test_only_a_compilers_error_is_kept(tmp_path: Path) -> None:
    for text in ("Error building extension 'k': nvcc error   : 'cicc' died due to signal 9 (Kill signal)",
                 "Error building extension 'k': fatal error: No space left on device",
                 "Error building extension 'k': cuda.cu:1:10: fatal error: cutlass/cutlass.h: No such file or directory",
                 "Error building extension 'k': error: undefined reference to `cublasSgemm_v2'"):
        failed.remember(tmp_path, "k", RuntimeError(text))
        assert failed.remembered(tmp_path, "k") is None
    failed.remember(tmp_path, "k", ImportError("Error building extension 'k': error"))
    assert failed.remembered(tmp_path, "k") is None
    failed.remember(tmp_path, "k", RuntimeError("Error building extension 'k': a.cpp:1:30: error: expected ';'"))
    assert failed.remembered(tmp_path, "k") == "Error building extension 'k': a.cpp:1:30: error: expected ';'"


def test_another_compiler_or_include_path_does_not_see_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failed.remember(tmp_path, "k", RuntimeError("Error building extension 'k': a.cpp:1:30: error: expected ';'"))
    assert failed.remembered(tmp_path, "k") is not None
    monkeypatch.setenv("CPATH", str(tmp_path / "include"))
    assert failed.remembered(tmp_path, "k") is None
    monkeypatch.delenv("CPATH")
    other = tmp_path / "g++-other"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv("CXX", str(other))
    assert failed.remembered(tmp_path, "k") is None
