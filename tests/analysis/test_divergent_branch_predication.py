"""CL201's claim of proof checked against the compiler: a branch whose body is straight-line code may be
predicated by nvcc (every lane issues the body, the others predicated off: no divergence, as the H200 measured
on cuda-samples' globalToShmemAsyncCopy lines 133 and 705), so CL201 calls it `info`; a body with a loop, a
barrier copy, a pipeline wait or a division by a variable is branched over, and stays `warning`.

The kernels are the CL2 fixture's `quarter_lanes_*` (modelled on the four globalToShmemAsyncCopy kernels, block
16×16, `t4x < 16`: 8 of 32 lanes). With nvcc and nvdisasm on PATH, the SASS decides: a finding is `info`
exactly when the memory instructions of its body are predicated (`@P0 LDG`), `warning` when they are not."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import AnalysisConfig

FIXTURE = Path(__file__).parent / "fixtures" / "CL2_divergence.cu"
MEMORY = re.compile(r"\b(LDG|STG|LDS|STS|LDGSTS|UBLKCP|ATOMS|ATOMG|RED)\b")


def _divergent() -> list:
    report = analyze_text(str(FIXTURE), FIXTURE.read_text(), AnalysisConfig(min_severity="hint"))
    return [f for f in report.findings if f.code == "CL201"]


def test_straight_line_bodies_are_info_and_branching_ones_warning() -> None:
    severity = {f.kernel: f.severity.value for f in _divergent() if f.kernel.startswith("quarter_lanes_")}
    assert severity == {
        "quarter_lanes_copy": "info",  # globalToShmemAsyncCopy.cu:705, `*A4s = *A4;`
        "quarter_lanes_pipeline_copy": "info",  # :133, memcpy_async into a pipeline (one cp.async)
        "quarter_lanes_helper_copy": "info",  # an inlined helper without a branch
        "quarter_lanes_pipeline_wait": "warning",  # :219, `pipe.consumer_wait()` in the body
        "quarter_lanes_barrier_copy": "warning",  # :308, memcpy_async with a barrier
        "quarter_lanes_division": "warning",  # IEEE division's slow path
    }
    [copy] = [f for f in _divergent() if f.kernel == "quarter_lanes_copy"]
    assert "nvcc may predicate" in copy.message and dict(copy.evidence)["straight_line"] is True


def test_a_straight_body_that_ends_the_kernel_stays_warning() -> None:
    """The lanes that skip it exit (`@P0 EXIT`): the body runs on the taken lanes alone."""
    severity = {f.kernel: f.severity.value for f in _divergent()}
    assert severity["odd_even_heavy"] == severity["interleaved_one_path"] == "warning"


def _nvdisasm() -> str | None:
    nvcc = shutil.which("nvcc")
    beside = Path(nvcc).resolve().parent / "nvdisasm" if nvcc else None
    return shutil.which("nvdisasm") or (str(beside) if beside and beside.is_file() else None)


def _sass(tmp_path: Path) -> dict[str, list[tuple[int, str]]]:
    """Kernel (mangled name) → its instructions with the fixture line each comes from (None: a header's)."""
    cubin = tmp_path / "fixture.cubin"
    subprocess.run([shutil.which("nvcc"), "-arch=sm_90", "-O3", "-std=c++17", "-lineinfo", "-cubin", "-o",
                    str(cubin), str(FIXTURE)], check=True, capture_output=True, timeout=300)
    text = subprocess.run([_nvdisasm(), "-gi", "-c", str(cubin)], check=True, capture_output=True, text=True,
                          timeout=120).stdout
    functions: dict[str, list[tuple[int, str]]] = {}
    instructions: list = []
    line = None
    for raw in text.splitlines():
        if m := re.match(r"//-+ \.text\.(\S+)", raw):
            instructions = functions.setdefault(m.group(1), [])
        elif m := re.search(r'//## File "(.*)", line (\d+)', raw):
            line = int(m.group(2)) if m.group(1).endswith(FIXTURE.name) else None
        elif (m := re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;", raw)) and line is not None:
            instructions.append((line, m.group(1)))
    return functions


def _body_lines(lines: list[str], if_line: int) -> range:
    """The lines inside the braces the `if` on `if_line` opens (its consequence: an `else` is another path)."""
    depth = 0
    for i in range(if_line - 1, len(lines)):
        for ch in lines[i]:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if depth == 0 and ch == "}":
                return range(if_line + 1, i + 1)
    raise AssertionError(f"no closing brace for the if on line {if_line}")


@pytest.mark.skipif(shutil.which("nvcc") is None or _nvdisasm() is None, reason="needs nvcc and nvdisasm")
def test_info_exactly_where_nvcc_predicates_the_body(tmp_path: Path) -> None:
    functions = _sass(tmp_path)
    lines = FIXTURE.read_text().splitlines()
    seen = {}
    for f in _divergent():
        if f.severity.value == "info" and not dict(f.evidence).get("straight_line"):
            continue  # info for another reason (a size its launch does not fix): no claim about predication
        body = _body_lines(lines, f.line)
        [name] = [n for n in functions if re.match(rf"_Z{len(f.kernel)}{f.kernel}\b|_Z{len(f.kernel)}{f.kernel}[A-Z]",
                                                   n)]
        # `@!PT` never runs (a scheduling filler): not the body's
        memory = [i for line, i in functions[name] if line in body and MEMORY.search(i) and not i.startswith("@!PT")]
        assert memory, f"{f.kernel}: no memory instruction on lines {body.start}-{body.stop - 1}"
        predicated = [i.startswith("@") for i in memory]
        seen[f.kernel] = (f.severity.value, all(predicated) if f.severity.value == "info" else not any(predicated))
    assert all(agrees for _, agrees in seen.values()), {k: v for k, v in seen.items() if not v[1]}
    assert {"info", "warning"} <= {severity for severity, _ in seen.values()}
