"""Macros, structs and __device__ helpers from an included header are followed, and the results change when
the header does (the server re-checks open files on a header change)."""

from __future__ import annotations

from pathlib import Path

from cudalens.analysis.api import DocumentAnalyzer, analyze_text
from cudalens.analysis.config import AnalysisConfig
from cudalens.workspace.includes import DiskIncludes

KERNEL = """#include "layout.cuh"
__global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[AT(i)];
}
"""


def test_header_macro_is_expanded(tmp_path: Path) -> None:
    (tmp_path / "layout.cuh").write_text("#define AT(i) ((i) * STRIDE)\n#define STRIDE 4\n")
    path = tmp_path / "k.cu"
    path.write_text(KERNEL)
    report = analyze_text(str(path), KERNEL, read_include=DiskIncludes())
    assert report.includes == ["layout.cuh"]
    assert [f.code for f in report.findings] == ["CL101"]
    assert "4 elements" in report.findings[0].message


def test_header_change_changes_the_result(tmp_path: Path) -> None:
    header = tmp_path / "layout.cuh"
    header.write_text("#define AT(i) ((i) * 4)\n")
    doc = DocumentAnalyzer(str(tmp_path / "k.cu"), read_include=DiskIncludes())
    assert [f.code for f in doc.update(KERNEL).findings] == ["CL101"]
    header.write_text("#define AT(i) (i)\n")
    assert doc.update(KERNEL).findings == []


def test_missing_header_is_not_an_error(tmp_path: Path) -> None:
    report = analyze_text(str(tmp_path / "k.cu"), KERNEL, read_include=DiskIncludes())
    assert report.errors == [] and report.includes == ["layout.cuh"]


def _one_finding_with_helper(tmp_path: Path, helper: str, params: str, statement: str):
    """The one finding of a kernel whose fourth line calls a helper of helpers.cuh, and the kernel's text."""
    (tmp_path / "helpers.cuh").write_text(helper)
    text = ('#include "helpers.cuh"\n'
            f"__global__ void k({params}) {{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    {statement}\n"
            "}\n")
    [finding] = analyze_text(str(tmp_path / "k.cu"), text, read_include=DiskIncludes()).findings
    return finding, text


def test_finding_in_a_header_helper_lands_on_the_call(tmp_path: Path) -> None:
    finding, text = _one_finding_with_helper(
        tmp_path, "\n\n\n__device__ float load_col(const float* m, int row, int ld) { return m[row * ld]; }\n",
        "const float* m, float* out, int ld", "if (i < ld) out[i] = load_col(m, i, ld);")
    assert finding.code == "CL101" and finding.line == 4
    assert text.splitlines()[3][finding.column - 1:].startswith("load_col(")


def test_a_finding_at_a_header_helper_call_names_the_array_of_the_strided_access(tmp_path: Path) -> None:
    # the call stands for both stores of the helper: the coalesced one to `p` and the strided one to `q`
    finding, _ = _one_finding_with_helper(
        tmp_path, "__device__ void write_pair(float* a, float* b, int i, float x) { a[i] = x; b[i * 4] = x; }\n",
        "float* p, float* q, const float* r, int n", "if (i < n) write_pair(p, q, i, r[i]);")
    assert finding.code == "CL101" and finding.line == 4
    assert "store to `q`" in finding.message and "4 elements" in finding.message


def test_a_branch_in_a_header_helper_is_reported_at_the_call(tmp_path: Path) -> None:
    # the shape of cuda-samples' sortingNetworks Comparator() (a header's helper branching on the keys); the
    # finding belonged at the call in the .cu, not at the header's line number read in the .cu
    (tmp_path / "common.cuh").write_text(
        "\n" * 40 + "__device__ inline void Comparator(unsigned& a, unsigned& b, unsigned dir) {\n"
        "    if ((a > b) == dir) {\n        for (int r = 0; r < 8; ++r) { unsigned t = a; a = b * 3u; b = t + 1u; }\n"
        "        a += 1; b += 1;\n    }\n}\n")
    source = ('#include "common.cuh"\n__global__ void k(unsigned* keys) {\n'
              '    unsigned a = keys[threadIdx.x], b = keys[threadIdx.x + 256];\n'
              '    Comparator(a, b, 1);\n    keys[threadIdx.x] = a;\n}\n')
    path = tmp_path / "k.cu"
    path.write_text(source)
    report = analyze_text(str(path), source, AnalysisConfig(min_severity="hint"), read_include=DiskIncludes())
    assert {f.line for f in report.findings if f.code == "CL203"} == {4}


def test_the_editors_reader_prefers_open_text_resolves_paths_and_records_what_it_read(tmp_path: Path) -> None:
    # The server's reader is this one class: an open header's text is newer than its file (even one never saved),
    # relative include folders start at `base`, and what was read is recorded under its real path.
    (tmp_path / "src").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "layout.cuh").write_bytes(b"\xef\xbb\xbf#define STRIDE 4\n")  # a byte order mark
    unsaved = str((tmp_path / "src" / "new.cuh").resolve())
    reader = DiskIncludes(("inc",), str(tmp_path), {unsaved: "#define NEW 1\n"}.get, real_paths=True)
    including = str(tmp_path / "src" / "k.cu")
    assert reader("layout.cuh", including) == "#define STRIDE 4\n"
    assert reader("new.cuh", including) == "#define NEW 1\n"
    assert reader("absent.cuh", including) is None
    assert reader.locate("../inc/layout.cuh", including) == str((tmp_path / "inc" / "layout.cuh").resolve())
    assert reader.read == {str((tmp_path / "inc" / "layout.cuh").resolve()), unsaved}
    assert reader.find("layout.cuh", including) is not None and len(reader.read) == 2  # `find` records nothing


WARPS = """#include "quantize.cuh"
__global__ void k(float* s) {
    __shared__ float t[4];
    const int warp = threadIdx.x / WS;
    const int lane = threadIdx.x % WS;
    if (lane == 0) t[warp] = 1.0f;
    __syncthreads();
    if (warp == 0) {
        float a = threadIdx.x < 4 ? t[lane] : 0.0f;
        if (lane == 0) { t[0] = a; s[blockIdx.x] = t[0]; }
    }
}
void go(float* s) { k<<<8, 128>>>(s); }
"""


def test_a_macro_from_a_headers_header_is_known(tmp_path: Path) -> None:
    # ggml: quantize.cu includes quantize.cuh, which includes common.cuh, where WARP_SIZE is defined
    (tmp_path / "quantize.cuh").write_text('#include "common.cuh"\n')
    (tmp_path / "common.cuh").write_text('#include "quantize.cuh"\n#define WS 32\n')  # a cycle, too
    reader = DiskIncludes()
    report = analyze_text(str(tmp_path / "k.cu"), WARPS, read_include=reader)
    assert report.findings == [] and report.errors == []
    assert {Path(p).name for p in reader.read} == {"quantize.cuh", "common.cuh"}


def test_without_the_header_the_warp_split_is_a_guess_and_a_race_on_it_only_info(tmp_path: Path) -> None:
    # the same kernel with common.cuh missing: `warp == 0` cannot be evaluated, so every lane runs its body
    (tmp_path / "quantize.cuh").write_text('#include "common.cuh"\n')
    report = analyze_text(str(tmp_path / "k.cu"), WARPS, AnalysisConfig(min_severity="info"),
                          read_include=DiskIncludes())
    [race] = [f for f in report.findings if f.code == "CL303"]
    assert race.severity.value == "info" and "could not be evaluated" in race.message


SORTER = """#include "swap.cuh"
__global__ void sort_step(unsigned* keys) {
    __shared__ unsigned s[1024];
    s[threadIdx.x] = keys[threadIdx.x];
    s[threadIdx.x + 512] = keys[threadIdx.x + 512];
    __syncthreads();
    unsigned pos = 2 * threadIdx.x;
    swap_if(s[pos], s[pos + 64]);
}
void launch(unsigned* keys) { sort_step<<<1, 256>>>(keys); }
"""


def test_references_into_shared_memory_are_loaded_and_stored_where_a_header_helper_uses_them(
        tmp_path: Path) -> None:
    # a compare-and-swap through `unsigned &`: its loads and stores are the helper's lines' (ncu counts them
    # there); each is shown at the call, with the helper's expression as the related place
    (tmp_path / "swap.cuh").write_text(
        "__device__ void swap_if(unsigned &a, unsigned &b) {\n"
        "    if (a > b) {\n"
        "        unsigned t = a;\n"
        "        a = b;\n"
        "        b = t;\n"
        "    }\n"
        "}\n")
    path = tmp_path / "k.cu"
    path.write_text(SORTER)
    report = analyze_text(str(path), SORTER, read_include=DiskIncludes())
    conflicts = [f for f in report.findings if f.code == "CL301"]
    assert {f.line for f in conflicts} == {8}
    places = sorted((r.path, r.span.line) for f in conflicts for r in f.related if "inlined helper" in r.message)
    assert {line for _, line in places} == {2, 4, 5}  # both loads of line 2, the stores (`t = a` is in a register)
    assert all(p is not None and p.endswith("swap.cuh") for p, _ in places)
    assert any("write to" in f.message for f in conflicts)
