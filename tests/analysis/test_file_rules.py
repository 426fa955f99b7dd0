"""File-level rules (`Rule.check_unit`: launch sites, host code) run on every update, beside the per-kernel
results that are cached: their findings follow every edit, and the host code of included headers never yields
findings placed in the including file."""

from __future__ import annotations

from pathlib import Path

from cudalens.analysis.api import DocumentAnalyzer, analyze_text
from cudalens.analysis.config import AnalysisConfig
from cudalens.workspace.includes import DiskIncludes

SOURCE = """__global__ void scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

void launch(float* out, const float* in, int n) {
    scale<<<(n + 99) / 100, 100>>>(out, in, n);
    cudaGetLastError();
}
"""


def _codes(report) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in report.findings)


def test_host_edit_updates_launch_findings() -> None:
    doc = DocumentAnalyzer("k.cu")
    assert _codes(doc.update(SOURCE)) == [(7, "CL401")]
    report = doc.update(SOURCE.replace("99) / 100, 100>>>", "127) / 128, 128>>>"))
    assert _codes(report) == []
    assert report.kernels[0].launch_sites[0].block == (128, 1, 1)
    hints = DocumentAnalyzer("k.cu", AnalysisConfig(min_severity="hint"))
    assert _codes(hints.update(SOURCE.replace("    cudaGetLastError();\n", ""))) == [(7, "CL401"), (7, "CL602")]


def test_kernel_edit_keeps_file_findings() -> None:
    doc = DocumentAnalyzer("k.cu")
    doc.update(SOURCE)
    assert _codes(doc.update(SOURCE.replace("2.0f * in[i]", "3.0f * in[i]"))) == [(7, "CL401")]


def test_host_edit_that_moves_lines_moves_file_findings() -> None:
    doc = DocumentAnalyzer("k.cu")
    doc.update(SOURCE)
    moved = doc.update("// a new first line\n" + SOURCE)
    assert _codes(moved) == [(8, "CL401")]


def test_header_host_code_is_not_reported_in_the_including_file(tmp_path: Path) -> None:
    (tmp_path / "helpers.cuh").write_text(
        "inline void wait_all(int n) {\n    for (int i = 0; i < n; ++i) cudaDeviceSynchronize();\n}\n"
        "inline void check() { cudaGetLastError(); }\n")
    source = '#include "helpers.cuh"\n' + SOURCE.replace("    cudaGetLastError();\n", "    check();\n")
    report = analyze_text(str(tmp_path / "k.cu"), source, AnalysisConfig(min_severity="hint"),
                          read_include=DiskIncludes())
    # no CL601 from the header's loop; its check() helper does count as an error check (no CL602)
    assert _codes(report) == [(8, "CL401")]
