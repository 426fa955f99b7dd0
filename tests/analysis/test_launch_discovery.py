"""Launches found where they are, in the shapes real code writes them (llm.c's dev/cuda drivers, cuda-samples,
wrappers around templates): each case says which block (and template arguments) the analysis must see, and
the cases a constant cannot be read from say which dimension stays assumed."""

from __future__ import annotations

import pytest

from cudalens.analysis.api import analyze_text, launch_entry
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.findings import Severity

KERNEL_2D = """
__global__ void k(float* out, int n) {
    out[threadIdx.y * 64 + threadIdx.x * 2] = 1.0f;
}
"""

# (host code launching `k`, the blocks its launch sites give, as (x, y, z) with None where not constant)
FOUND = {
    "brace_initialised": ("void run(float* o, int z) { dim3 block{4, 8, 2}; k<<<1, block>>>(o, 4); }",
                          [(4, 8, 2)]),
    "copy_list_initialised_in_wrapper (llm.c matmul_backward_bias8)": (
        "void k8(float* o, int block_size) { dim3 block_dim = {4, 8, (unsigned)block_size / 32};\n"
        "  k<<<1, block_dim>>>(o, 4); }\n"
        "int main() { float* o; int block_sizes[] = {64, 256};\n"
        "  for (int j = 0; j < 2; j++) { int block_size = block_sizes[j]; k8(o, block_size); } }",
        [(4, 8, 2), (4, 8, 8)]),
    "vexing_parse_with_local_consts": ("void run(float* o) { const int Bc = 32; constexpr int Br = 4;\n"
                                       "  dim3 b(Bc, Br); k<<<1, b>>>(o, 4); }", [(32, 4, 1)]),
    "vexing_parse_with_file_constants": ("const int TX = 16;\nconstexpr int TY = 16;\n"
                                         "void run(float* o) { dim3 b(TX, TY); k<<<1, b>>>(o, 4); }", [(16, 16, 1)]),
    "defines (cuda-samples convolutionSeparable)": (
        "#define ROWS_BLOCKDIM_X 16\n#define ROWS_BLOCKDIM_Y 4\n"
        "void run(float* o) { dim3 blocks(8, 8); dim3 threads(ROWS_BLOCKDIM_X, ROWS_BLOCKDIM_Y);\n"
        "  k<<<blocks, threads>>>(o, 4); }", [(16, 4, 1)]),
    "two_declarators_in_one_declaration": ("#define TS 16\nvoid run(float* o) { dim3 block(TS, TS), grid(4, 4);\n"
                                           "  k<<<grid, block>>>(o, 4); }", [(16, 16, 1)]),
    "helper_wrapper_called_with_constants": ("void launch(float* o, int threads) { k<<<1, threads>>>(o, 4); }\n"
                                             "void run(float* o) { launch(o, 128); launch(o, 64); }",
                                             [(128, 1, 1), (64, 1, 1)]),
    "two_level_wrapper (llm.c layernorm_forward)": (
        "void forward1(float* o, const int block_size) { k<<<1, block_size>>>(o, block_size); }\n"
        "void forward(int kernel_num, float* o, const int block_size) {\n"
        "  switch (kernel_num) { case 1: forward1(o, block_size); break; } }\n"
        "int main() { float* o; int block_sizes[] = {32, 512};\n"
        "  for (int j = 0; j < 2; j++) { int block_size = block_sizes[j]; forward(1, o, block_size); } }",
        [(32, 1, 1), (512, 1, 1)]),
    "partly_constant": ("void run(float* o, int rows) { dim3 block(32, rows); k<<<1, block>>>(o, 4); }",
                        [(32, None, 1)]),
    "run_time_scalar": ("void run(float* o, int n) { int threads = n < 256 ? 64 : 256; k<<<1, threads>>>(o, 4); }",
                        [(None, 1, 1)]),
    "reassigned": ("void run(float* o, int n) { int threads = 256; if (n < 256) threads = 64;\n"
                   "  k<<<1, threads>>>(o, 4); }", [(None, 1, 1)]),  # a scalar: one-dimensional, its size open
    "case_of_a_switch_on_the_block_size (cuda-samples reduction, threadFenceReduction)": (
        "void reduce(float* o, int threads) { dim3 block(threads, 1, 1);\n"
        "  switch (threads) { case 256: k<<<1, block>>>(o, 4); break;\n"
        "  case 16: k<<<1, block>>>(o, 4); break; default: k<<<1, block>>>(o, 4); } }",
        [(256, 1, 1), (16, 1, 1), (None, 1, 1)]),
    "switched_variable_reassigned": (
        "void reduce(float* o, int threads) { threads = threads / 2; dim3 block(threads, 1, 1);\n"
        "  switch (threads) { case 256: k<<<1, block>>>(o, 4); break; } }", [(None, 1, 1)]),
    "dim3_parameter_of_an_uncalled_wrapper": ("void run(float* o, dim3 block) { k<<<1, block>>>(o, 4); }", [None]),
    "parameter_overwritten_before_the_launch (llm.c matmul_forward4)": (
        "void forward4(float* o, int sqrt_block_size) { sqrt_block_size = 16;\n"
        "  dim3 b(sqrt_block_size, sqrt_block_size); k<<<1, b>>>(o, 4); }\n"
        "void run(float* o) { forward4(o, 4); forward4(o, 32); }", [(16, 16, 1)]),
    "parameter_overwritten_in_a_branch": (
        "void forward4(float* o, int s, int n) { if (n > 4) s = 16;\n"
        "  dim3 b(s, s); k<<<1, b>>>(o, 4); }\n"
        "void run(float* o, int n) { forward4(o, 4, n); }", [(None, None, 1)]),
}


# (host code, the blocks its launches see): what a launch sees of a variable is the last write before it in
# source order, along every path to it; a write it may or may not see leaves that dimension open (assumed)
WRITTEN = {
    "member_written_twice": ("void run(float* o) { dim3 t; t.x = 8; t.x = 32; k<<<1, t>>>(o, 4); }", [(32, 1, 1)]),
    "members_written_in_any_order": ("void run(float* o) { dim3 t; t.y = 4; t.x = 16; t.y = 2; k<<<1, t>>>(o, 4); }",
                                     [(16, 2, 1)]),
    "whole_dim3_reassigned": ("void run(float* o) { dim3 t(8, 8); t = dim3(32, 4); k<<<1, t>>>(o, 4); }",
                              [(32, 4, 1)]),
    "member_after_the_whole": ("void run(float* o) { dim3 t(8, 8); t = dim3(32, 4); t.y = 2; k<<<1, t>>>(o, 4); }",
                               [(32, 2, 1)]),
    "compound_assignment_of_members": (
        "void run(float* o) { dim3 t(16, 4); t.x *= 2; t.y += 4; t.z++; k<<<1, t>>>(o, 4); }", [(32, 8, 2)]),
    "member_written_in_a_branch": (
        "void run(float* o, int n) { dim3 t(16, 4); if (n > 4) t.x = 32; k<<<1, t>>>(o, 4); }", [(None, 4, 1)]),
    "member_written_after_the_launch": (
        "void run(float* o) { dim3 t(16, 4); k<<<1, t>>>(o, 4); t.x = 64; k<<<1, t>>>(o, 4); }",
        [(16, 4, 1), (64, 4, 1)]),
    "member_written_after_the_launch_in_a_loop_around_both": (
        "void run(float* o) { dim3 t(16, 4); for (int i = 0; i < 3; i++) { k<<<1, t>>>(o, 4); t.x *= 2; } }",
        [(None, 4, 1)]),
    "address_taken": ("void run(float* o) { dim3 t(16, 4); setup(&t); k<<<1, t>>>(o, 4); }", [(None, None, None)]),
    "scalar_reassigned": ("void run(float* o) { int threads = 128; threads = 256; k<<<1, threads>>>(o, 4); }",
                          [(256, 1, 1)]),
    "scalar_scaled": ("void run(float* o) { int threads = 128; threads *= 2; k<<<1, threads>>>(o, 4); }",
                      [(256, 1, 1)]),
    "scalar_written_after_the_launch": (
        "void run(float* o) { int threads = 128; k<<<1, threads>>>(o, 4); threads = 256; }", [(128, 1, 1)]),
    "scalar_read_by_a_dim3_built_after_the_write": (
        "void run(float* o) { int threads = 128; threads = 64; dim3 b(threads, 2); threads = 8;\n"
        "  k<<<1, b>>>(o, 4); }", [(64, 2, 1)]),
    "written_in_the_branch_that_launches": (
        "void run(float* o, int n) { int t = 128;\n"
        "  if (n > 4) { t = 64; k<<<1, t>>>(o, 4); } else { k<<<1, t>>>(o, 4); } }", [(64, 1, 1), (128, 1, 1)]),
    "written_in_a_branch_that_returns": (
        "void run(float* o, int n) { int t = 128; if (n == 0) { t = 64; return; } k<<<1, t>>>(o, 4); }",
        [(128, 1, 1)]),
    "loop_doubling_the_block": (
        "void run(float* o) { for (int t = 32; t <= 256; t *= 2) k<<<1, t>>>(o, 4); }", [(None, 1, 1)]),
    "declared_in_the_loop_body": (
        "void run(float* o) { for (int i = 0; i < 3; i++) { int t = 64; k<<<1, t>>>(o, 4); t = 8; } }",
        [(64, 1, 1)]),
    "written_in_a_lambda_that_returns": (
        "void run(float* o) { int t = 128; auto f = [&]() { t = 64; return; }; f(); k<<<1, t>>>(o, 4); }",
        [(None, 1, 1)]),
    "shadowed_in_an_inner_block": (
        "void run(float* o) { int t = 64; { int t = 32; t = 16; } k<<<1, t>>>(o, 4); }", [(64, 1, 1)]),
    "parameter_written_on_one_path (llm.c)": (
        "void launch(float* o, int bs, int n) { if (n < bs) bs = 32; k<<<1, bs>>>(o, 4); }\n"
        "void run(float* o, int n) { launch(o, 256, n); }", [(None, 1, 1)]),
}


@pytest.mark.parametrize("case", sorted(FOUND | WRITTEN))
def test_launch_blocks(case: str) -> None:
    host, blocks = (FOUND | WRITTEN)[case]
    source = KERNEL_2D + host + "\n"
    entry = launch_entry("k.cu", source)
    assert [r.values.block_dims for r in entry.records if r.kernel == "k"] == blocks


def test_the_last_write_sizes_the_grid_and_shared_bytes() -> None:
    host = "void run(float* o) { int g = 2; g = 4; int s = 128; s += 128; k<<<g, 32, s>>>(o, 4); g = 9; }\n"
    [record] = launch_entry("k.cu", KERNEL_2D + host).records
    assert record.values.grid == (4, 1, 1) and record.values.dynamic_shared_bytes == 256


RACE_PAST_128 = ("__global__ void k(const float* in, float* out) { __shared__ float s[256];\n"
                 "  s[threadIdx.x] = in[threadIdx.x];\n  out[threadIdx.x] = s[(threadIdx.x + 128) % 256]; }\n")


@pytest.mark.parametrize(("host", "proven"), [
    ("dim3 t; t.x = 32; t.x = 256; k<<<1, t>>>(a, o);", True),
    ("dim3 t; t.x = 256; k<<<1, t>>>(a, o); t.x = 32;", True),
    ("dim3 t; t.x = 256; if (n > 4) t.x = 32; k<<<1, t>>>(a, o);", False),
    ("int threads = 32; threads = 256; k<<<1, threads>>>(a, o);", True),
    ("int threads = 256; if (n > 4) threads = 32; k<<<1, threads>>>(a, o);", False),
])
def test_a_block_set_on_one_path_is_an_assumption_the_finding_names(host: str, proven: bool) -> None:
    """A race only a block over 128 threads has: proven where the last write before the launch fixes 256, info
    naming the assumed block where a branch may set 32."""
    source = RACE_PAST_128 + "void run(const float* a, float* o, int n) { " + host + " }\n"
    [f] = [f for f in analyze_text("k.cu", source, AnalysisConfig(min_severity="info")).findings if f.code == "CL303"]
    if proven:
        assert f.severity == Severity.ERROR and "assum" not in f.message
    else:
        assert f.severity == Severity.INFO and f.evidence_dict()["assumed"] == {"block": "256×1×1"}
        assert "assuming a 256-thread block: not fixed by its launch" in f.message


def test_a_dispatch_over_block_sizes_is_no_cl401() -> None:
    """`case 16:` of a switch over the thread count launches 16-thread blocks for small inputs, by choice."""
    source = KERNEL_2D + ("void reduce(float* o, int threads) { dim3 block(threads, 1, 1);\n"
                          "  switch (threads) { case 16: k<<<1, block>>>(o, 4); break; } }\n"
                          "void fixed(float* o) { k<<<1, 16>>>(o, 4); }\n")
    report = analyze_text("k.cu", source)
    assert [f.line for f in report.findings if f.code == "CL401"] == [7]  # the fixed launch only


def _k_finding(source: str):
    report = analyze_text("k.cu", source, AnalysisConfig(min_severity="info"))
    [finding] = [f for f in report.findings if f.code == "CL101"]
    return finding


def test_a_run_time_dimension_is_the_only_one_assumed() -> None:
    f = _k_finding(KERNEL_2D + FOUND["partly_constant"][0])
    assert "block.y" in dict(f.evidence_dict().get("assumed", {})) or "holds alike" in f.message
    assert "block.x" not in f.message and f.evidence_dict()["block"] == "32×8×1"


def test_a_wrapper_called_with_constants_gives_proven_findings_with_the_call_as_related() -> None:
    f = _k_finding(KERNEL_2D.replace("threadIdx.y * 64 + ", "") + FOUND["helper_wrapper_called_with_constants"][0])
    assert f.severity == Severity.WARNING and "assuming" not in f.message
    assert [r.message for r in f.related] == [
        "`k` is launched here with block 128×1×1, through `launch(o, 128)` (line 6)",
        "`k` is launched here with block 64×1×1, through `launch(o, 64)` (line 6)"]


TEMPLATED = """
#define BLOCK 128
template <int B, typename T>
__global__ void tk(const T* in, T* out) { out[threadIdx.x * B] = in[threadIdx.x]; }
"""


@pytest.mark.parametrize(("host", "args"), [
    ("void run(float* a, float* b) { tk<BLOCK, float><<<1, BLOCK>>>(a, b); }", (128, "float")),
    ("template <typename T> void run(const T* a, T* b) { tk<4, T><<<1, 256>>>(a, b); }\n"
     "void go(double* a, double* b) { run<double>(a, b); }", (4, "double")),
    ("template <typename T> void run(const T* a, T* b) { tk<4, T><<<1, 256>>>(a, b); }", (4, None)),
    ("void run(float* a, float* b) { tk<true, float><<<1, 256>>>(a, b); }", (1, "float")),  # a bool argument
])
def test_template_arguments_of_a_launch(host: str, args: tuple) -> None:
    [record] = launch_entry("k.cu", TEMPLATED + host + "\n").records
    assert record.values.template_args == args


def test_a_type_argument_sizes_the_elements() -> None:
    host = "void run(double* a, double* b) { tk<1, double><<<1, 256>>>(a, b); }\n"
    report = analyze_text("k.cu", TEMPLATED.replace("threadIdx.x * B", "threadIdx.x * 2 * B") + host)
    [f] = [f for f in report.findings if f.code == "CL101"]
    assert f.severity == Severity.WARNING and f.evidence_dict()["element_bytes"] == 8
    unknown = "template <typename T> void run(const T* a, T* b) { tk<1, T><<<1, 256>>>(a, b); }\n"
    [g] = [f for f in analyze_text("k.cu", TEMPLATED.replace("threadIdx.x * B", "threadIdx.x * 2 * B")
                                   + unknown).findings if f.code == "CL101"]
    assert g.severity == Severity.INFO and "assuming T = float: not fixed by its launch" in g.message


def test_an_explicit_instantiation_gives_the_template_arguments() -> None:
    source = TEMPLATED + "template __global__ void tk<8, double>(const double*, double*);\n"
    [f] = [f for f in analyze_text("k.cu", source).findings if f.code == "CL101"]
    assert f.evidence_dict()["element_bytes"] == 8 and "8 elements (64 B) apart" in f.message
    assert "assuming" not in f.message and "no launch of `tk` found; it holds alike" in f.message


DIRECTIVE = """
// cudalens: launch block=(8,4,2)
__global__ void d(float* out) {
    out[threadIdx.z * 1024 + threadIdx.y * 256 + threadIdx.x * 32] = 1.0f;
}
"""


def test_a_directive_gives_the_launch() -> None:
    report = analyze_text("k.cu", DIRECTIVE)
    [f] = [f for f in report.findings if f.code == "CL101"]
    assert f.severity == Severity.WARNING and f.evidence_dict()["block"] == "8×4×2"
    assert "assuming" not in f.message and not report.errors


@pytest.mark.parametrize("gap", ["", "\n"])
def test_a_directive_above_a_template_in_a_namespace(gap: str) -> None:
    # the comments right above the `template <...>` line count; a blank line between them and it ends the run
    text = ("namespace ops {\n/* a kernel */\n// cudalens: launch block=(8,4,2) S=32\n" + gap
            + DIRECTIVE.split("\n", 2)[2].replace("__global__", "template <int S>\n__global__").replace("* 32]", "* S]")
            + "}\n")
    report = analyze_text("k.cu", text)
    [f] = [f for f in report.findings if f.code == "CL101"]
    if gap:
        assert f.severity == Severity.INFO and "assum" in f.message
    else:
        assert f.severity == Severity.WARNING and f.evidence_dict()["block"] == "8×4×2" and not report.errors


@pytest.mark.parametrize("bad", ["block=(8,x)", "block=0", "T=1+2", "block=(8,4"])
def test_a_directive_that_cannot_be_read_is_reported_never_guessed(bad: str) -> None:
    report = analyze_text("k.cu", DIRECTIVE.replace("block=(8,4,2)", bad))
    assert len(report.errors) == 1 and "k.cu:2:" in report.errors[0] and "cudalens: launch" in report.errors[0]
    [f] = [f for f in report.findings if f.code == "CL101"]
    assert f.severity == Severity.INFO or "holds alike" in f.message


TRAITS_KERNEL = """
template <int kNThreads_, typename input_t_> struct Traits {
    using input_t = input_t_;
    static constexpr int kNThreads = kNThreads_;
};
template <typename Ktraits>
__global__ void kt(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x]; }
"""


@pytest.mark.parametrize(("host", "block", "args"), [
    # mamba / causal-conv1d: a local `using`, the host's template arguments from its caller, a launch through
    # a variable holding the kernel's address
    ("template <int kNThreads, typename input_t> void launch(const float* a, float* b) {\n"
     "  using Ktraits = Traits<kNThreads, input_t>;\n"
     "  auto kernel = &kt<Ktraits>;\n"
     "  kernel<<<1, Ktraits::kNThreads>>>(a, b); }\n"
     "void go(const float* a, float* b) { launch<128, float>(a, b); }", (128, 1, 1), ("Traits<128, float>",)),
    # apex: the kernel's name without `&`; a caller that leaves the type open
    ("template <typename T> void launch(const float* a, float* b) {\n"
     "  auto kernel = kt<Traits<64, T>>;\n"
     "  kernel<<<1, 64>>>(a, b); }", (64, 1, 1), ("Traits<64, T>",)),
    # a variable that holds something else is not a kernel
    ("void go(const float* a, float* b) { auto kernel = other; kernel<<<1, 32>>>(a, b); }", None, None),
    # the kernel the last assignment before the launch gives (a pointer declarator too)
    ("void go(const float* a, float* b) { auto* kernel = kt<Traits<64, float>>;\n"
     "  kernel = kt<Traits<32, float>>; kernel<<<1, 32>>>(a, b); }", (32, 1, 1), ("Traits<32, float>",)),
    # flashinfer's dispatch over topK: assigned in branches, the launch's kernel is not fixed by the text
    ("void go(const float* a, float* b, int topK) { auto* kernel = kt<Traits<1, float>>;\n"
     "  if (topK > 16) { kernel = kt<Traits<32, float>>; } else if (topK > 8) { kernel = kt<Traits<16, float>>; }\n"
     "  kernel<<<1, 1024>>>(a, b); }", None, None),
])
def test_a_launch_through_a_variable_and_a_local_type(host: str, block: tuple | None, args: tuple | None) -> None:
    records = launch_entry("k.cu", TRAITS_KERNEL + host + "\n").records
    found = [(r.values.block, r.values.template_args) for r in records if r.kernel == "kt"]
    assert found == ([(block, args)] if block is not None else [])


@pytest.mark.parametrize(("host", "tied"), [
    # DeepSpeed: the block's x and y are computed from sizes the kernel also takes
    ("void run(float* o, int heads, int hidden) { dim3 b(hidden / heads, heads, 2); k<<<1, b>>>(o, heads, hidden); }",
     ((0, "$2 / $1"), (1, "$1"))),
    # a value the kernel does not take is not tied; a constant dimension needs nothing
    ("void run(float* o, int heads, int rows) { dim3 b(32, rows); k<<<1, b>>>(o, heads, 4); }", ()),
])
def test_a_block_computed_from_the_kernels_arguments(host: str, tied: tuple) -> None:
    source = "__global__ void k(float* out, int heads, int hidden) { out[threadIdx.y] = 0.0f; }\n" + host + "\n"
    [record] = launch_entry("k.cu", source).records
    assert record.values.block_from_args == tied
