"""The launch index across files: a kernel defined in a header is analysed with the launches of the `.cu` files
that include it (llm.c's llmc/*.cuh launched from train_gpt2.cu has this shape, one level down), once per
distinct configuration; its findings land in the header, with the launch as related information."""

from __future__ import annotations

import pickle
from pathlib import Path

from cudalens.analysis.api import analyze_text, launch_entry
from cudalens.analysis.findings import Severity
from cudalens.analysis.launch_index import LaunchIndex
from cudalens.workspace.includes import DiskIncludes

HEADER = """#pragma once
// a header's kernel: nothing in this file launches it
__global__ void row_sums(const float* in, float* out, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += in[row * cols + c];
    out[row] = s;
}

__global__ void half_warp(float* out) {
    if (threadIdx.x < 16) {
        float v = out[threadIdx.x];
        v = v * 2.0f; v = v + 1.0f; v = v * v;
        out[threadIdx.x] = v;
    }
}
"""
MAIN = """#include "rows.cuh"
void run(const float* in, float* out) {
    row_sums<<<64, 128>>>(in, out, 512);
    half_warp<<<1, 32>>>(out);
}
"""
OTHER = """// defines its own kernel of the same name: its launches are not the header's
__global__ void half_warp(float* out) { out[threadIdx.x] = 0.0f; }
void other(float* out) { half_warp<<<1, 16>>>(out); }
"""


def _index(tmp_path: Path, files: dict[str, str]) -> LaunchIndex:
    index = LaunchIndex()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for name, text in files.items():
        entry = launch_entry(str(tmp_path / name), text, DiskIncludes())
        if entry.records:
            index.update(str(tmp_path / name), entry)
    return index


def test_a_header_kernel_gets_the_launches_of_the_files_that_include_it(tmp_path: Path) -> None:
    index = _index(tmp_path, {"rows.cuh": HEADER, "main.cu": MAIN, "other.cu": OTHER})
    header = str(tmp_path / "rows.cuh")
    alone = analyze_text(header, HEADER, read_include=DiskIncludes())
    report = analyze_text(header, HEADER, read_include=DiskIncludes(), launch_index=index)

    [divergent] = [f for f in alone.findings if f.code == "CL201"]
    assert "no launch of `half_warp` found" in divergent.message  # proven only "for every block tried"
    [divergent] = [f for f in report.findings if f.code == "CL201"]
    assert divergent.path == header and divergent.line == 11 and divergent.severity == Severity.WARNING
    assert divergent.evidence_dict()["block"] == "32×1×1" and "no launch" not in divergent.message
    [launch] = divergent.related
    assert (launch.path, launch.span.line, launch.message) == (
        str(tmp_path / "main.cu"), 4, "`half_warp` is launched here with block 32×1×1")

    loads = [f for f in report.findings if f.code == "CL101"]
    assert loads and all(f.severity == Severity.WARNING and "`cols` elements apart" in f.message for f in loads)
    info = {k.name: k for k in report.kernels}
    assert [(s.path, s.block) for s in info["row_sums"].launch_sites] == [(str(tmp_path / "main.cu"), (128, 1, 1))]


def test_a_file_launches_its_own_function_even_when_it_is_not_recognised_as_a_kernel(tmp_path: Path) -> None:
    # its kernel is spelt with a macro this file never defines (the library's header is not included): the
    # launch is still of the function defined here, not of the header's kernel of that name
    macro_spelt = OTHER.replace("__global__", "MYLIB_KERNEL")
    index = _index(tmp_path, {"rows.cuh": HEADER, "main.cu": MAIN, "other.cu": macro_spelt})
    header = str(tmp_path / "rows.cuh")
    assert not index.reaches(str(tmp_path / "other.cu"), "half_warp", header)
    report = analyze_text(header, HEADER, read_include=DiskIncludes(), launch_index=index)
    [divergent] = [f for f in report.findings if f.code == "CL201"]
    assert [r.path for r in divergent.related] == [str(tmp_path / "main.cu")]


def test_a_launch_that_makes_the_conclusion_false_removes_it(tmp_path: Path) -> None:
    main = MAIN.replace("half_warp<<<1, 32>>>", "half_warp<<<1, 16>>>")
    index = _index(tmp_path, {"rows.cuh": HEADER, "main.cu": main})
    report = analyze_text(str(tmp_path / "rows.cuh"), HEADER, read_include=DiskIncludes(), launch_index=index)
    assert not [f for f in report.findings if f.code == "CL201"]  # 16 threads: one half-empty warp, no split


def test_the_including_file_gets_no_finding_of_the_header_kernel(tmp_path: Path) -> None:
    index = _index(tmp_path, {"rows.cuh": HEADER, "main.cu": MAIN})
    report = analyze_text(str(tmp_path / "main.cu"), MAIN, read_include=DiskIncludes(), launch_index=index)
    assert [f.code for f in report.findings if f.code.startswith(("CL1", "CL2"))] == []


def test_updates_say_which_kernels_changed_and_the_index_survives_pickling(tmp_path: Path) -> None:
    index = _index(tmp_path, {"rows.cuh": HEADER, "main.cu": MAIN})
    main = str(tmp_path / "main.cu")
    same = launch_entry(main, MAIN, DiskIncludes())
    assert index.update(main, same) == set()
    edited = MAIN.replace("<<<1, 32>>>", "<<<1, 64>>>")
    assert index.update(main, launch_entry(main, edited, DiskIncludes())) == {"half_warp"}
    assert index.reaches(main, "half_warp", str(tmp_path / "rows.cuh"))
    copy = pickle.loads(pickle.dumps(index))
    assert [r.values.block for r in copy.external(str(tmp_path / "rows.cuh"))["half_warp"]] == [(64, 1, 1)]
    assert index.remove(main) == {"row_sums", "half_warp"}
    assert index.external(str(tmp_path / "rows.cuh")) == {}


def test_a_kernel_declared_in_a_header_and_defined_elsewhere_gets_its_launches(tmp_path: Path) -> None:
    files = {
        "k.h": "__global__ void scale(float* out, int stride);\n",
        "k.cu": "#include \"k.h\"\n__global__ void scale(float* out, int stride) {\n"
                "    out[threadIdx.x * stride] = 1.0f;\n}\n",
        "main.cu": "#include \"k.h\"\nvoid run(float* o) { scale<<<1, 256>>>(o, 64); }\n",
    }
    index = _index(tmp_path, files)
    report = analyze_text(str(tmp_path / "k.cu"), files["k.cu"], read_include=DiskIncludes(), launch_index=index)
    [f] = [f for f in report.findings if f.code == "CL101"]
    assert f.severity == Severity.WARNING and "`stride` elements apart" in f.message
    assert f.related[-1].path == str(tmp_path / "main.cu")


def test_the_index_counts_the_headers_the_analysis_read(tmp_path: Path) -> None:
    """One walk of the include graph: a header included two levels down and one found through an include folder
    (`<lib/...>`) are both the file's includes, in the index as in the analysis's report."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "deep.cuh").write_text("#pragma once\n#define COLS 512\n")
    (tmp_path / "rows.cuh").write_text('#pragma once\n#include "mid.cuh"\n' + HEADER)
    (tmp_path / "mid.cuh").write_text("#pragma once\n#include <lib/deep.cuh>\n")
    main = tmp_path / "main.cu"
    main.write_text(MAIN)
    reader = DiskIncludes((str(tmp_path),))
    entry = launch_entry(str(main), MAIN, reader)
    report = analyze_text(str(main), MAIN, read_include=DiskIncludes((str(tmp_path),)))
    expected = {str((tmp_path / n).resolve()) for n in ("rows.cuh", "mid.cuh", "lib/deep.cuh")}
    assert entry.includes == expected
    assert {str(Path(p).resolve()) for p in report.headers} == expected
