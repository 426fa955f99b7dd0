"""Bad input never raises: garbage, truncation, unbalanced braces, huge and empty files, non-UTF-8 text, and
random mutations of real kernels (hypothesis). Every kernel analysed either yields findings or nothing; the
analyzer's internal errors would show in `report.errors`, which must stay empty."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudalens.analysis.api import DocumentAnalyzer, analyze_text

FIXTURES = Path(__file__).parent / "fixtures"
KERNELS = [p.read_text() for p in sorted(FIXTURES.glob("CL*.cu"))]


def _check(path: str, text: str) -> None:
    report = analyze_text(path, text)
    assert report.errors == []


@pytest.mark.parametrize("text", [
    "",
    "\n\n\n",
    "__global__",
    "__global__ void k(",
    "__global__ void k(float* a) { a[threadIdx.x] = ",
    "__global__ void k(float* a) {{{{ a[threadIdx.x] = 1; ",
    "}}}} __global__ void k(float* a) { a[threadIdx.x * 2] = 1; } }}}",
    "#define X(a) a[\n__global__ void k(float* p) { X(p) threadIdx.x] = 0; }",
    "__global__ void k(float* a) { for(;;) { a[threadIdx.x] = 1; } }",
    "__global__ void k(float* a) { while (1) { __syncthreads(); } }",
    "__global__ void r(float* a) { r<<<1, 32>>>(a); a[0] = 1; }",
    "__device__ int f(int x) { return f(x + 1); } __global__ void k(int* a) { a[f(threadIdx.x)] = 1; }",
    "__global__ void k(float* a, int n) { a[threadIdx.x / 0] = a[threadIdx.x % 0]; a[1 << 70] = 0; }",
    "__global__ void k(float* a) { __shared__ float s[0][0]; s[threadIdx.x][0] = 1; }",
    "__global__ void k(float* a) { __shared__ float s[-4]; s[threadIdx.x] = 1; }",
    "\x00\x01\x02 __global__ \xff\xfe void k() {}",
])
def test_malformed_sources_do_not_raise(text: str) -> None:
    _check("bad.cu", text)
    _check("bad.py", f"src = '''{text}'''\nload_inline(name='x', cpp_sources='', cuda_sources=src)\n")


def test_non_utf8_and_garbage_bytes() -> None:
    rng = random.Random(0)
    garbage = bytes(rng.randrange(256) for _ in range(20000)).decode("utf-8", errors="replace")
    _check("garbage.cu", garbage)
    _check("garbage.py", garbage)
    _check("latin1.cu", "// caf\udce9\n__global__ void k(float* a) { a[threadIdx.x] = 1; }")


def test_huge_file() -> None:
    text = "\n".join(KERNELS) * 3 + "\n" + "int x = 0;\n" * 200_000
    _check("huge.cu", text)


def test_truncations_of_every_fixture() -> None:
    for text in KERNELS:
        for cut in range(0, len(text), max(1, len(text) // 40)):
            _check("cut.cu", text[:cut])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutations_of_real_kernels(data) -> None:
    text = data.draw(st.sampled_from(KERNELS))
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if op == "delete":
            j = data.draw(st.integers(i, min(len(text), i + 40)))
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + data.draw(st.sampled_from(
                ["{", "}", "(", ")", ";", "[", "]", "threadIdx.x", "*", "/", "%", "<<", "__syncthreads();",
                 "if (threadIdx.x % 2)", "for (;;)", "return;", "\"", "'", "\\", "#define Q ("])) + text[i:]
        else:
            j = data.draw(st.integers(i, min(len(text), i + 80)))
            text = text[:j] + text[i:j] + text[j:]
    _check("mutated.cu", text)


def test_incremental_updates_match_fresh_analysis() -> None:
    doc = DocumentAnalyzer("edit.cu")
    rng = random.Random(1)
    text = KERNELS[0]
    for _ in range(40):
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice(["\n", " ", "x", "1", ";"]) + text[i:]
        incremental = doc.update(text)
        fresh = analyze_text("edit.cu", text)
        assert incremental.findings == fresh.findings
        assert incremental.kernels == fresh.kernels


def test_a_64_bit_hash_constant_is_not_an_internal_error() -> None:
    # ThunderKittens' fill_kernel (kernels/gemm/common.cuh): splitmix64 constants do not fit the int64 lanes.
    text = """__global__ void fill(float* data, unsigned long count, unsigned long long seed) {
    unsigned long idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < count) {
        unsigned long long x = seed + idx;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = x ^ (x >> 31);
        data[idx] = (float)(x >> 40) * (1.0f / 16777216.0f);
    }
}
void go(float* d, unsigned long n) { fill<<<(n + 255) / 256, 256>>>(d, n, 7); }
"""
    report = analyze_text("fill.cu", text)
    assert report.errors == []
    assert [f.code for f in report.findings if f.severity.value in ("warning", "error")] == []
