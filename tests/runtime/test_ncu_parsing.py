"""ncu CSV pages, line mapping, CL904 hints and the kernel filter, on recorded sample output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalens.profiler.ncu import csv_pages, line_hints, line_map
from cudalens.profiler.ncu.metrics import CUDAFORGE_METRICS, METRICS, kernel_filter
from cudalens.profiler.ncu.profile import cache_key, ncu_command
from cudalens.worker.child.results import NcuProfile, base_kernel_name

GENERATED = "/root/.cache/torch_extensions/py312_cu130/cudalens_transpose_0123456789ab/cuda.cu"
LOAD_INLINE_HEADER = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"


def test_raw_page(data_dir):
    launches = csv_pages.parse_raw((data_dir / "ncu_raw_page.csv").read_text())
    assert [k.base_name for k in launches] == ["transpose_naive", "tile_kernel"]
    t = launches[0]
    assert t.metrics["gpu__time_duration.sum"] == 41344
    assert t.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 4194304
    assert t.metrics["launch__registers_per_thread"] == 16
    assert t.text["launch__func_cache_config"] == "CachePreferNone"
    tile = launches[1]
    assert tile.metrics["gpu__time_duration.sum"] == 1234.5
    assert "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum" not in tile.metrics  # n/a
    assert tile.launch == 1


def test_source_page_lines(data_dir):
    lines = csv_pages.parse_source((data_dir / "ncu_source_cuda.csv").read_text())
    store = next(x for x in lines if x.line == 11)
    assert store.kernel.startswith("transpose_naive")
    assert store.file == GENERATED
    assert store.global_sectors == 4718592 and store.global_sectors_ideal == 1048576
    assert store.global_requests == 262144
    assert store.excess_sector_share == pytest.approx(0.7778, abs=1e-3)
    assert store.sectors_per_request == pytest.approx(18.0)
    assert store.stall_samples == 1204
    assert all(x.line != 1 for x in lines)  # all-zero rows are dropped
    tile = next(x for x in lines if x.file == "/work/shared/bank.cu")
    assert tile.bank_conflict_share == pytest.approx(31 / 32)


def test_generated_file_maps_back_to_user_lines(data_dir):
    cu = data_dir / "transpose.cu"
    text = cu.read_text()
    lines = csv_pages.parse_source((data_dir / "ncu_source_cuda.csv").read_text())
    mapped = line_map.map_lines(lines, str(cu), text, {GENERATED: LOAD_INLINE_HEADER + text})
    by_line = {x.line: x for x in mapped}
    assert 8 in by_line and "out[c * rows + r]" in text.splitlines()[7]
    assert by_line[8].global_sectors == 4718592
    assert 5 in by_line and 6 in by_line
    assert all(x.file == str(cu) for x in mapped)
    assert "bank.cu" not in {Path(x.file).name for x in mapped}  # another file's lines do not land here


def test_cl904_on_the_uncoalesced_line(data_dir):
    cu = data_dir / "transpose.cu"
    text = cu.read_text()
    lines = csv_pages.parse_source((data_dir / "ncu_source_cuda.csv").read_text())
    mapped = line_map.map_lines(lines, str(cu), text, {GENERATED: LOAD_INLINE_HEADER + text})
    findings = line_hints.line_findings(str(cu), text, mapped)
    assert [(f.code, f.line) for f in findings] == [("CL904", 8)]
    f = findings[0]
    assert f.message.startswith("78% of this line's global-memory sectors are excess (18.0 sectors/request, ideal 4.0)")
    assert f.span.column == 9  # the statement, not its indentation
    assert f.evidence_dict()["sectors"] == 4718592


def test_cl904_bank_conflict_and_divergence():
    from cudalens.worker.child.results import LineCounters

    text = "a\nb\nc\n"
    lines = [
        LineCounters("k.cu", 1, "k", shared_wavefronts=4096, shared_wavefronts_ideal=128, inst_executed=100, thread_inst_executed=3200),
        LineCounters("k.cu", 2, "k", inst_executed=100, thread_inst_executed=800),
    ]
    findings = line_hints.line_findings("k.cu", text, lines)
    messages = {f.line: f.message for f in findings}
    assert "bank-conflict replays (32.0× the conflict-free count)" in messages[1]
    assert "8.0 of 32 threads" in messages[2]


def test_profile_json_round_trip(data_dir):
    launches = csv_pages.parse_raw((data_dir / "ncu_raw_page.csv").read_text())
    lines = csv_pages.parse_source((data_dir / "ncu_source_cuda.csv").read_text())
    p = NcuProfile(tuple(launches), tuple(lines), "csv", "2025.3.1")
    assert NcuProfile.from_json(p.to_json()) == p


@pytest.mark.parametrize(
    ("name", "hit"),
    [
        ("transpose_naive", True),  # --kernel-name-base function
        ("transpose_naive(const float *, float *, int, int)", True),  # demangled
        ("void ns::transpose_naive<float, 4>(float const*, float*, int)", True),  # templated, namespaced
        ("transpose_naive2", False),
        ("my_transpose_naive", False),
    ],
)
def test_kernel_filter_matches_templated_names(name, hit):
    filt = kernel_filter(["transpose_naive", "tile_kernel"])
    assert filt.startswith("regex:")
    assert bool(re.search(filt.removeprefix("regex:"), name)) is hit


def test_base_kernel_name():
    assert base_kernel_name("void ns::k<float, (int)4>(float const*, int)") == "k"
    assert base_kernel_name("k") == "k"
    assert base_kernel_name("transpose_naive(const float *, float *, int, int)") == "transpose_naive"


def test_metric_set_and_command():
    assert len(CUDAFORGE_METRICS) == 24
    for needed in (
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "smsp__thread_inst_executed_per_inst_executed.ratio",
        "sm__maximum_warps_per_active_cycle_pct",
    ):
        assert needed in METRICS
    cmd = ncu_command("ncu", ("k",), list(METRICS), Path("/tmp/r.ncu-rep"), ["python", "t.py"], 8)
    joined = " ".join(cmd)
    assert "--clock-control none" in joined
    assert "--section SourceCounters" in joined
    assert "--kernel-name regex:" in joined
    assert cmd[-2:] == ["python", "t.py"]


def test_cache_key_follows_source():
    a = cache_key("x", "", ("k",), "ncu")
    assert a == cache_key("x", "", ("k",), "ncu")
    assert a != cache_key("y", "", ("k",), "ncu")
    assert a != cache_key("x", "ref", ("k",), "ncu")
    assert cache_key("x", "", ("k",), "ncu", "/a.cu") != cache_key("x", "", ("k",), "ncu", "/b.cu")


def test_source_page_with_labelled_cells():
    text = (
        '"Kernel Name: transpose_naive"\n'
        '"File Path: /src/t.cu"\n'
        '"# Line","Source","Instructions Executed","L2 Theoretical Sectors Global","L2 Theoretical Sectors Global Ideal"\n'
        '"8","  out[i] = in[j];","100","800","200"\n'
    )
    [line] = csv_pages.parse_source(text)
    assert (line.kernel, line.file, line.line, line.excess_sectors) == ("transpose_naive", "/src/t.cu", 8, 600)


def test_lines_map_into_the_python_file_that_embeds_the_cuda(data_dir):
    from cudalens.worker.child.results import LineCounters

    py = data_dir / "kb_relu_cuda_right.py"
    text = py.read_text()
    start = text.index('relu_source = """') + len('relu_source = """')
    cuda = text[start : text.index('"""', start)]
    generated = LOAD_INLINE_HEADER + cuda
    gen_line = next(i for i, x in enumerate(generated.splitlines(), 1) if "y[idx] =" in x)
    want = next(i for i, x in enumerate(text.splitlines(), 1) if "y[idx] =" in x)
    counters = [LineCounters("/build/cuda.cu", gen_line, "relu_kernel", global_sectors=8, global_sectors_ideal=4)]
    [mapped] = line_map.map_lines(counters, str(py), text, {"/build/cuda.cu": generated})
    assert mapped.line == want and mapped.file == str(py)


def test_python_targets_get_lineinfo_through_nvcc(monkeypatch, tmp_path):
    from cudalens.profiler.ncu.profile import target_env

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    env = target_env("sol.py", "load_inline(name='x', cuda_sources=src)")
    assert env["NVCC_APPEND_FLAGS"].endswith("-lineinfo")
    assert env["TORCH_EXTENSIONS_DIR"].startswith(str(tmp_path))
    assert target_env("sol.py", "extra_cuda_cflags=['-lineinfo']") is None
    assert target_env("k.cu", "") is None  # cudalens builds .cu files with -lineinfo itself


def test_cuda_sass_view_keeps_line_rows_only(data_dir):
    lines = csv_pages.parse_source((data_dir / "ncu_source_cuda_sass.csv").read_text())
    assert [(x.line, x.kernel) for x in lines] == [(10, "tile_transpose_kernel"), (12, "tile_transpose_kernel")]
    conflicted = lines[1]
    assert conflicted.source.strip().startswith("out[base")  # the CUDA source column, not the SASS one
    assert conflicted.shared_wavefronts == 1048576 and conflicted.bank_conflict_share == pytest.approx(31 / 32)
    cu = data_dir / "bank_conflict.cu"
    mapped = line_map.map_lines(lines, "/work/tests/runtime/data/bank_conflict.cu", cu.read_text())
    findings = line_hints.line_findings(str(cu), cu.read_text(), mapped)
    assert [(f.line, f.severity.value) for f in findings] == [(12, "warning")]
