"""Bad input never raises: garbage, truncation, unbalanced braces, huge and empty files, non-UTF-8 text, and
random mutations of real kernels (hypothesis). Every kernel analysed either yields findings or nothing; the
analyzer's internal errors would show in `report.errors`, which must stay empty."""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudalens.analysis import incremental, unit
from cudalens.analysis.api import DocumentAnalyzer, analyze_text
from cudalens.analysis.findings import Severity

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
    text = (FIXTURES / "CL1_coalescing.cu").read_text()  # not CL002's: a fresh analysis of it takes ~1 s
    for _ in range(40):
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice(["\n", " ", "x", "1", ";"]) + text[i:]
        incremental = doc.update(text)
        fresh = analyze_text("edit.cu", text)
        assert incremental.findings == fresh.findings
        assert incremental.kernels == fresh.kernels


@pytest.mark.parametrize("step", [1, 3, 64, 1 << 14])
def test_the_edit_span_is_the_common_prefix_and_suffix(step: int) -> None:
    # incremental.py compares a block at a time, then by halves: every block size gives the byte-by-byte answer
    def by_bytes(a: bytes, b: bytes) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))

    rng = random.Random(step)
    for _ in range(300):
        old = bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(0, 400)))
        i = rng.randrange(len(old) + 1)
        j = rng.randrange(i, len(old) + 1)
        new = old[:i] + bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(0, 30))) + old[j:]
        prefix = incremental._common_prefix(old, new, step)
        assert prefix == by_bytes(old, new)
        limit = min(len(old), len(new)) - prefix
        assert incremental._common_suffix(old, new, limit, step) == by_bytes(old[::-1][:limit], new[::-1][:limit])


def test_reused_function_heads_and_launch_sites_match_a_fresh_analysis() -> None:
    # build_unit reads a definition's head and a host function's launch sites once per text (unit._shapes,
    # unit._launch_sites): edits in and around them must give what a process that never saw the text gives.
    doc = DocumentAnalyzer("heads.cu")
    rng = random.Random(3)
    text = "\n".join((FIXTURES / name).read_text() for name in ("CL4_launch.cu", "CL2_divergence.cu"))
    heads = [m.start() for m in re.finditer(r"__global__|template|__launch_bounds__|<<<|cudalens: launch", text)]
    doc.update(text)
    for _ in range(25):
        i = rng.choice(heads) + rng.randrange(-3, 40)
        text = text[:i] + rng.choice(["\n", " ", "x", "1", ",", "*", "<", ">", "("]) + text[i:]
        heads = [m.start() for m in re.finditer(r"__global__|template|__launch_bounds__|<<<|cudalens: launch", text)]
        incremental = doc.update(text)
        unit._shapes.clear()
        unit._launch_sites.clear()
        fresh = analyze_text("heads.cu", text)
        assert incremental.findings == fresh.findings
        assert incremental.kernels == fresh.kernels
        assert incremental.launch_records == fresh.launch_records


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


# Code too deep or too long to analyse: a CL002 finding that names the kernel and what made it so, at `info`,
# never a silent pass, an internal error or a wait (benchmarks/deep_code.py times these).
FLAGGED = "a[threadIdx.x * 32] = 1;"  # CL101 wherever the kernel is analysed


def _kernel(body: str) -> str:
    return "__device__ float f(float x) { return x; }\n__global__ void k(float* a) { " + body + " " + FLAGGED + " }\n"


def _sum(n: int) -> str:
    return "float s = " + " + ".join(f"a[{i}]" for i in range(n)) + "; a[threadIdx.x] = s;"


TOO_DEEP = [
    ("an expression of 500 terms", _sum(500)),
    ("an expression of 20,000 terms", _sum(20_000)),
    ("parentheses nested 1,000 deep", "a[threadIdx.x] = " + "(" * 1000 + "1" + ")" * 1000 + ";"),
    ("`if` statements nested 1,000 deep", "if (a[0] > 0) { " * 1000 + "a[1] = 2;" + " }" * 1000),
    ("`for` loops nested 300 deep", "for (int i = 0; i < 2; ++i) { " * 300 + "a[i] = 2;" + " }" * 300),
    ("calls nested 1,000 deep", "a[threadIdx.x] = " + "f(" * 1000 + "1" + ")" * 1000 + ";"),
    ("subscripts nested 1,000 deep", "a[threadIdx.x] = " + "a[" * 1000 + "0" + "]" * 1000 + ";"),
    ("blocks nested 1,000 deep", "{ " * 1000 + "a[1] = 2;" + " }" * 1000),
]


@pytest.mark.parametrize(("reason", "body"), TOO_DEEP, ids=[r for r, _ in TOO_DEEP])
def test_a_kernel_too_deep_is_reported_with_what_made_it_so(reason: str, body: str) -> None:
    report = analyze_text("deep.cu", _kernel(body))
    assert report.errors == []
    [finding] = report.findings  # and no CL101: none of the kernel was analysed
    assert (finding.code, finding.severity, finding.kernel, finding.line) == ("CL002", Severity.INFO, "k", 2)
    assert finding.message.startswith(f"Kernel `k` not analysed: {reason} (line 2), ")
    assert finding.message.endswith("levels of nesting where the analyzer stops at 256")


WITHIN_LIMIT = [
    ("an expression of 250 terms", _sum(250)),
    ("parentheses nested 250 deep", "a[threadIdx.x] = " + "(" * 250 + "1" + ")" * 250 + ";"),
    ("`if` statements nested 120 deep", "if (a[0] > 0) { " * 120 + "a[1] = 2;" + " }" * 120),
    ("calls nested 120 deep", "a[threadIdx.x] = " + "f(" * 120 + "1" + ")" * 120 + ";"),
]


@pytest.mark.parametrize(("shape", "body"), WITHIN_LIMIT, ids=[s for s, _ in WITHIN_LIMIT])
def test_just_within_the_limit_the_kernel_is_analysed_whole(shape: str, body: str) -> None:
    # the deepest trees the analyzer takes, under pytest's own frames: Python's recursion limit is not reached
    report = analyze_text("deep.cu", _kernel(body))
    assert report.errors == []
    assert [f.code for f in report.findings] == ["CL101"]


def test_a_kernel_too_long_to_interpret_is_reported_as_analysed_in_part() -> None:
    body = " ".join(f"a[threadIdx.x + {i}] = {i};" for i in range(5000))
    report = analyze_text("long.cu", _kernel(body))
    assert report.errors == []
    [finding] = report.findings  # the store flagged at the end was never reached
    assert finding.code == "CL002" and finding.severity == Severity.INFO
    assert finding.message == ("Kernel `k` analysed only up to here: the interpreter stopped after 20,000 steps, "
                               "too long a kernel to follow whole; what follows was not checked")
    assert finding.evidence_dict() == {"stopped": "steps"}
    assert finding.column > 1000  # at the statement it stopped in, far along the line


def test_a_macro_too_deep_to_expand_stops_the_kernel_there_and_says_so() -> None:
    text = "#define DEEP " + "(" * 1000 + "1" + ")" * 1000 + "\n" + _kernel("a[threadIdx.x] = DEEP;")
    report = analyze_text("macro.cu", text)
    assert report.errors == []
    [finding] = report.findings
    assert (finding.code, finding.line, finding.column) == ("CL002", 3, 31)  # `a[threadIdx.x] = DEEP;`
    assert finding.message.startswith("Kernel `k` analysed only up to here: helpers and macros nest deeper")


def test_deep_host_code_helpers_and_declarations_are_left_out_by_name_and_the_rest_is_analysed() -> None:
    text = ("const int N = " + " + ".join("1" for _ in range(400)) + ";\n"
            "__device__ float deep(float x) { return " + "(" * 400 + "x" + ")" * 400 + "; }\n"
            "__global__ void k(float* a) { a[threadIdx.x] = deep(a[0]); " + FLAGGED + " }\n"
            "void host(float* a) { int n = " + "(" * 400 + "1" + ")" * 400 + "; k<<<1, n>>>(a); }\n")
    report = analyze_text("parts.cu", text)
    assert report.errors == []
    assert [(f.line, f.code, f.message.split(":")[0]) for f in report.findings] == [
        (1, "CL002", "A file-scope declaration not analysed"),
        (2, "CL002", "Function `deep` not analysed"),
        (3, "CL101", "Uncoalesced global store to `a`"),
        (4, "CL002", "Function `host` not analysed"),
    ]


def test_embedded_cuda_too_deep_is_reported_in_the_python_file() -> None:
    kernel = _kernel(_sum(500)).replace("\n", "\\n")
    text = f"from torch.utils.cpp_extension import load_inline\n\nsrc = '{kernel}'\n" \
           "load_inline(name='x', cpp_sources='', cuda_sources=src)\n"
    report = analyze_text("deep.py", text)
    assert report.errors == []
    [finding] = report.findings
    assert (finding.path, finding.code, finding.line) == ("deep.py", "CL002", 3)


def test_editing_a_kernel_past_the_limit_and_back_matches_a_fresh_analysis() -> None:
    doc = DocumentAnalyzer("edit.cu")
    shallow, deep = _kernel(_sum(200)), _kernel(_sum(300))
    long = _kernel(" ".join(f"a[threadIdx.x + {i}] = {i};" for i in range(5000)))
    # a kernel's findings are cached and moved with it: the line it stopped at moves, and no message holds it
    for text in (shallow, deep, shallow, deep, long, "\n" + long, "\n\n" + deep):
        assert doc.update(text).findings == analyze_text("edit.cu", text).findings
    assert [f.code for f in doc.update(deep).findings] == ["CL002"]


def test_overflowing_and_nan_samples_warn_nothing() -> None:
    # numpy's RuntimeWarnings ("overflow encountered in scalar negative", "invalid value encountered in cast")
    # reached `cudalens check`'s stderr from sampled arithmetic
    source = """__global__ void k(long* out, float* f, long n) {
    long big = n * n * n * n * n * n;
    long m = -(big * big * big);
    float z = 0.0f;
    int i = (z / z) * threadIdx.x;
    out[threadIdx.x + m] = i;
    f[i + threadIdx.x] = (float)m;
}
void h(long* o, float* f) { k<<<1, 256>>>(o, f, 4096); }
"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = analyze_text("k.cu", source)
    assert report.errors == []
