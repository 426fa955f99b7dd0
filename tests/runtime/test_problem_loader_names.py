"""load_inline builds inside a user's module are named by their content, so the test job, the ncu target and
later optimize rounds reuse one build instead of re-versioning and rebuilding (two cold builds a round on the
H200 before)."""

from __future__ import annotations

from pathlib import Path

from cudalens.worker.child.lib import problem_loader


def test_same_sources_same_name_and_any_change_a_new_one() -> None:
    name = problem_loader.content_name
    base = name("relu", ["int f();"], ["__global__ void k(){}"], {"extra_cuda_cflags": ["-O3"]})
    assert base == name("relu", ["int f();"], ["__global__ void k(){}"], {"extra_cuda_cflags": ["-O3"], "verbose": True})
    assert base.startswith("relu_") and base.isidentifier()
    assert base != name("relu", ["int f();"], ["__global__ void k(){ }"], {"extra_cuda_cflags": ["-O3"]})
    assert base != name("relu", ["int f();"], ["__global__ void k(){}"], {"extra_cuda_cflags": ["-O2"]})


def test_the_module_sees_the_content_addressed_load_inline(tmp_path: Path) -> None:
    user = tmp_path / "model_new.py"
    user.write_text("from torch.utils.cpp_extension import load_inline\nSEEN = load_inline.__name__\n")
    module = problem_loader.load_module(user)
    assert module.SEEN == "load_inline"
    from torch.utils import cpp_extension

    assert cpp_extension.load_inline is not module.load_inline  # patched only while the module ran
