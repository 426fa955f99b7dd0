"""Every example must build with the real nvcc for sm_90, so that what cudalens says about it is said
about code that compiles.

`.cu` files are compiled as they are. For `.py` files the CUDA is taken from the module-level strings
that hold a `__global__` kernel (what `load_inline`/`RawKernel` would compile); a KernelBench string's
host wrapper needs the torch headers, which take minutes to parse, so only its device part is compiled:
the `#include <torch/...>` lines and everything from the first `torch::Tensor` wrapper on are left out.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")


def cuda_strings(py_file: Path) -> list[str]:
    """Module-level string constants and string arguments that contain a kernel."""
    tree = ast.parse(py_file.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "__global__" in node.value:
            found.append(node.value)
    return found


def device_part(cuda: str) -> str:
    kept = []
    for line in cuda.splitlines():
        if line.startswith("torch::Tensor"):
            break
        if not line.strip().startswith("#include <torch/"):
            kept.append(line)
    return "\n".join(kept) + "\n"


def nvcc_compile(source: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [NVCC, "-arch=sm_90", "-c", "-o", str(tmp_path / (source.stem + ".o")), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_examples_exist():
    assert len(list(EXAMPLES.glob("*.cu"))) >= 12
    assert len(list(EXAMPLES.glob("*.py"))) >= 2


@needs_nvcc
@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.cu")), ids=lambda p: p.name)
def test_cu_example_compiles(example: Path, tmp_path: Path):
    nvcc_compile(example, tmp_path)


@needs_nvcc
@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_py_example_cuda_compiles(example: Path, tmp_path: Path):
    strings = cuda_strings(example)
    assert strings, f"{example.name} holds no CUDA kernel string"
    for index, cuda in enumerate(strings):
        source = tmp_path / f"{example.stem}_{index}.cu"
        source.write_text(device_part(cuda))
        nvcc_compile(source, tmp_path)


def test_kernelbench_example_has_the_kernelbench_shape():
    tree = ast.parse((EXAMPLES / "kernelbench_row_sum.py").read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert {"Model", "ModelNew", "get_inputs", "get_init_inputs"} <= names
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "load_inline"]
    assert calls and {k.arg for k in calls[0].keywords} >= {"cuda_sources", "cpp_sources", "functions"}
    assert isinstance(next(k for k in calls[0].keywords if k.arg == "cuda_sources").value, ast.Name)
