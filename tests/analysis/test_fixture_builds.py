"""The launch, precision, host-code and atomics fixtures are real CUDA: nvcc builds them (except the ones named
`*.nocompile.cu`, which show what the compiler rejects), and in the precision fixtures a kernel named `fp64_*`
has FP64 instructions in its PTX while one named `fp32_*` has none — the analyzer's claims checked against
the compiler, not against our own expectations."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
BUILT_PREFIXES = ("CL4", "CL5", "CL6", "CL7")
PRECISION_PREFIXES = ("CL501", "CL502")
NVCC = shutil.which("nvcc")
FP64_INSTRUCTION = re.compile(r"\.f64\b")  # a type suffix (`mul.f64`, `cvt.f64.f32`); `%f64` is a register
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="needs nvcc (the CUDA toolkit) on PATH")


def _fixtures(prefixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.cu") if p.name.startswith(prefixes) and ".nocompile." not in p.name)


@needs_nvcc
@pytest.mark.parametrize("path", _fixtures(BUILT_PREFIXES), ids=lambda p: p.name)
def test_fixture_builds(path: Path, tmp_path: Path) -> None:
    done = subprocess.run([NVCC, "-arch=sm_90", "-c", str(path), "-o", str(tmp_path / "out.o")],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr


def _entries(ptx: str) -> dict[str, str]:
    """Kernel name (demangled enough: `_Z9fp64_axpbPfPKfi` -> `fp64_axpb`) -> its PTX body."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\S+?)\s*\((.*?)\n}", ptx, re.S):
        mangled = m.group(1)
        name = re.match(r"_Z(\d+)(\w+)", mangled)  # templates too: `_Z14fp64_templatedIfEvPT_PKS0_i`
        if name:
            out[name.group(2)[: int(name.group(1))]] = m.group(0)
    return out


@needs_nvcc
@pytest.mark.parametrize("path", _fixtures(PRECISION_PREFIXES), ids=lambda p: p.name)
def test_fp64_in_ptx_matches_kernel_names(path: Path, tmp_path: Path) -> None:
    ptx_path = tmp_path / "out.ptx"
    done = subprocess.run([NVCC, "-arch=sm_90", "-ptx", str(path), "-o", str(ptx_path)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    entries = _entries(ptx_path.read_text())
    assert entries, "no kernels in the PTX"
    fp64 = {name: bool(FP64_INSTRUCTION.search(body)) for name, body in entries.items()}
    wrong = {name: has for name, has in fp64.items()
             if name.startswith(("fp64_", "fp32_")) and has != name.startswith("fp64_")}
    assert not wrong, f"kernels whose name disagrees with their PTX (name: has FP64): {wrong}"
