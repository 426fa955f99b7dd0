"""A build's compiles started before torch is imported (fast_inline.start_early, while a worker warms up): torch's
command line worked out without torch, and a build that keeps what was compiled with it and compiles again what
was not (real g++, nvcc and ninja; with CPU torch the build stops at its link)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cudalens.worker.child.lib import fast_inline as fast
from tests.runtime.test_split_source import RELU, _cuda_include

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
ARGS = {"cpp_sources": "torch::Tensor run(torch::Tensor x);", "cuda_sources": RELU, "functions": ["run"],
        "extra_cuda_cflags": ["-O3"]}


@pytest.fixture
def cuda_home(monkeypatch, tmp_path):
    """CPU torch has no CUDA home of its own: the toolkit beside nvcc, named to torch and in the environment alike
    (as a worker's torch with CUDA finds it); a fresh cache folder."""
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    home = str(Path(_cuda_include()).parent)
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", home)
    monkeypatch.setenv("CUDA_HOME", home)
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return cpp_extension


def _torchs(cpp_extension, tmp_path: Path, flags: dict) -> dict[str, str]:
    """What torch's own ninja writer gives a `.cpp` file of the module `M` with these flags."""
    cpp_extension._write_ninja_file_to_build_library(
        path=str(tmp_path / "build.ninja"), name="M", sources=[str(tmp_path / "x.cpp")], extra_cuda_cflags=[],
        extra_sycl_cflags=[], extra_ldflags=[], with_cuda=True, with_sycl=False, is_standalone=False,
        extra_cflags=flags["extra_cflags"], extra_include_paths=flags["extra_include_paths"])
    text = (tmp_path / "build.ninja").read_text()
    variables = fast._ninja_variables(text, raw=True)
    return {"cxx": variables["cxx"], "cflags": variables["cflags"], "post_cflags": variables["post_cflags"],
            "command": re.search(r"^rule compile\n  command = (.*)$", text, re.M).group(1)}


@needs_nvcc
@pytest.mark.parametrize("flags", [{"extra_cflags": [], "extra_include_paths": []},
                                   {"extra_cflags": ["-O3", " -DX=1 "], "extra_include_paths": ["my/include"]}])
def test_the_command_line_worked_out_without_torch_is_torchs(cuda_home, tmp_path, flags):
    assert fast._cpp_variables(flags, "M") == _torchs(cuda_home, tmp_path, flags)


@needs_nvcc
@pytest.mark.timeout(300)
def test_a_build_keeps_what_started_early_with_its_flags_and_compiles_again_what_did_not(cuda_home, monkeypatch):
    """The bindings start with the command line worked out, the glue with one remembered wrongly (an extra define):
    the build that follows keeps the bindings' object, compiles the glue again and says so, and remembers torch's
    line for the next time."""
    a = {**fast._LOAD_INLINE_DEFAULTS, **ARGS, "name": "relu"}
    glue_flags = fast.glue_flags(fast.build_flags(a))
    wrong = fast._cpp_variables(glue_flags, fast._NAME)
    remembered = fast._remembered_path(glue_flags)
    remembered.parent.mkdir(parents=True)
    remembered.write_text(json.dumps({**wrong, "cflags": wrong["cflags"] + " -DCUDALENS_NOT_TORCHS"}))
    monkeypatch.setattr(fast, "_precompile", lambda command, shared: None)  # the header: not this test's
    first = len(fast.LOG)

    assert fast.start_early("relu", **ARGS) == ["bindings", "glue"]
    assert fast.start_early("relu", **ARGS) == []  # already at it: the folders' locks are held
    try:
        fast.fast_load_inline(cuda_home.load_inline, "relu", **ARGS)
    except RuntimeError as exc:  # CPU torch: no libtorch_cuda to link
        assert "Error linking" in str(exc)

    log = "\n".join(fast.LOG[first:])
    assert re.search(r"early main\.o of cudalens_ext_\w+ in [\d.]+ s", log), log
    assert re.search(r"early glue\.o of cudalens_ext_\w+ in [\d.]+ s", log), log
    assert re.search(r"early glue\.o of \w+ compiled again: torch's flags are not the ones guessed", log), log
    assert not re.search(r"early main\.o of \w+ compiled again", log), log
    assert json.loads(remembered.read_text())["cflags"] == wrong["cflags"]  # torch's, for the next early start


def test_an_early_start_declines_what_the_fast_build_does_not_take(cuda_home):
    assert fast.start_early("x", **{**ARGS, "build_directory": "/tmp/x"}) == []
    assert fast.start_early("x", **{**ARGS, "cuda_sources": "namespace n { }"}) == []  # split_source declines it
