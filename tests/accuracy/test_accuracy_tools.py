"""The accuracy corpus and its tools: the kernels build, each category has positive and negative cases,
and the measurement and scoring logic turns counters and sanitizer reports into the right line labels."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ACCURACY = Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy"
sys.path.insert(0, str(ACCURACY))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ACCURACY / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is being made
    spec.loader.exec_module(module)
    return module


corpus = _load("corpus")
measure = _load("measure")
OWN = sorted((ACCURACY / "kernels").glob("*.cu"))


def test_corpus_has_positive_and_negative_kernels_in_every_category():
    kernels = {}
    for path in OWN:
        kernels.update(corpus.expected_labels(path.read_text()))
    assert len(kernels) >= 30
    for category in corpus.CATEGORIES:
        positive = [k for k, labels in kernels.items() if labels[category]]
        assert positive, category
        assert len(positive) < len(kernels), category


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_corpus_kernel_builds(path: Path, tmp_path: Path):
    done = subprocess.run(
        ["nvcc", "-arch=sm_90", "-lineinfo", "-c", "-I", str(path.parent), "-o", str(tmp_path / "k.o"), str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_kernel_spans_follow_braces():
    text = (ACCURACY / "kernels" / "coalescing.cu").read_text()
    spans = {s.name: (s.first_line, s.last_line) for s in corpus.kernel_spans(text)}
    lines = text.splitlines()
    first, last = spans["load_stride2"]
    assert lines[first - 1].startswith("__global__ void load_stride2(")
    assert lines[last - 1] == "}"


def test_kernel_names_are_read_past_launch_bounds_on_either_side_of_void():
    # llm.c writes `__global__ void __launch_bounds__(16*16) matmul_forward_kernel4(`; a name read as
    # `__launch_bounds__` left the kernel's findings unscored against its measured truth
    text = ("__global__ void __launch_bounds__(16*16) k4(float* o) {\n}\n"
            "__global__ void __launch_bounds__(1024, MIN_BLOCKS(2))\nk5(float* o) {\n}\n"
            "__global__ __launch_bounds__(128) void k6(float* o) {\n}\n")
    assert [s.name for s in corpus.kernel_spans(text)] == ["k4", "k5", "k6"]


def _instruction(line, **values):
    return measure.Instruction(line=line, values=values)


def test_labels_from_source_counters():
    profile = measure.KernelProfile(
        "k",
        [
            # a coalesced load: 4 sectors per request, as ideal
            _instruction(10, memory_l2_theoretical_sectors_global=4000, memory_l2_theoretical_sectors_global_ideal=4000,
                         inst_executed=1000, thread_inst_executed=32000),
            # stride-2 load: twice the ideal sectors
            _instruction(11, memory_l2_theoretical_sectors_global=8000, memory_l2_theoretical_sectors_global_ideal=4000,
                         inst_executed=1000, thread_inst_executed=32000),
            # misaligned by one element: 5 sectors instead of 4 is not a stride
            _instruction(12, memory_l2_theoretical_sectors_global=5000, memory_l2_theoretical_sectors_global_ideal=4000,
                         inst_executed=1000, thread_inst_executed=32000),
            # 32-way shared conflict
            _instruction(13, memory_l1_wavefronts_shared=32000, memory_l1_wavefronts_shared_ideal=1000,
                         inst_executed=1000, thread_inst_executed=32000),
            # 8-byte accesses: two wavefronts, both ideal
            _instruction(14, memory_l1_wavefronts_shared=2000, memory_l1_wavefronts_shared_ideal=2000,
                         inst_executed=1000, thread_inst_executed=32000),
            # a heavy body run by half the lanes
            _instruction(15, inst_executed=4000, thread_inst_executed=64000),
            # a one-lane store, rare: real but not a meaningful share
            _instruction(16, inst_executed=10, thread_inst_executed=10),
        ],
        {},
    )
    labels = measure.label_kernel(profile)["labels"]
    assert labels == {"uncoalesced": [11], "bank_conflict": [13], "divergence": [15]}


def test_partial_last_warp_is_not_divergence():
    # A block of 48 threads: every line runs with 24 lanes on average; none is divergent against that.
    profile = measure.KernelProfile(
        "k", [_instruction(n, inst_executed=1000, thread_inst_executed=24000) for n in (5, 6, 7)], {}
    )
    assert measure.label_kernel(profile)["labels"]["divergence"] == []


def test_sanitizer_reports_become_line_groups():
    output = "\n".join(
        [
            "========= COMPUTE-SANITIZER",
            "========= Error: Race reported between Write access at k(float *)+0x80 in /r/barriers.cu:29",
            "=========     and Read access at k(float *)+0xa0 in /r/barriers.cu:30 [248 hazards]",
            "=========",
            "========= Barrier error detected. Divergent thread(s) in warp",
            "=========     at k2(float *)+0x60 in /r/barriers.cu:11",
            "=========     by thread (32,0,0) in block (0,0,0)",
            "=========     Saved host backtrace up to driver entry point at kernel launch time",
            "=========         Host Frame: main [0x1234] in /r/barriers.cu:60",
            "========= Warning: (Warp Level Programming) Potential RAW hazard detected at __shared__ 0x8 in /r/barriers.cu:40",
            "========= ERROR SUMMARY: 2 errors",
        ]
    )
    hits = measure.parse_sanitizer(output, "barriers.cu")
    assert [(h["kind"], h["lines"]) for h in hits] == [("error", [29, 30]), ("error", [11]), ("warning", [40])]


def test_kernel_names_as_written():
    assert measure.kernel_name("void reduce0<float>(float *, float *, unsigned int)") == "reduce0"
    assert measure.kernel_name("ns::copy(float *, int)") == "copy"


def test_score_counts_statement_overlaps():
    score = _load("score")
    statements = score.Statements("a = f(x,\n      y);\nb = 1;\nc = 2;\n")
    assert statements.extent(2, 2) == (1, 2)
    tally = score.Tally()
    # each finding is its extents: its own, then its related locations' (barrier and race pairs)
    score._tally(tally, "f.cu:k", statements, [(statements.extent(1, 1),), ((4, 4),)], [[2], [3]])
    assert (tally.truth_found, tally.truth_items, tally.flagged_right, tally.flagged) == (1, 2, 1, 2)
    assert tally.misses == ["f.cu:k line 3"] and tally.false_alarms == ["f.cu:k line 4"]


def test_a_pair_finding_matches_through_its_related_location():
    score = _load("score")
    statements = score.Statements("a;\nb;\nc;\n")
    tally = score.Tally()
    score._tally(tally, "f.cu:k", statements, [((1, 1), (3, 3))], [[3]])
    assert (tally.truth_found, tally.flagged_right, tally.false_alarms) == (1, 1, [])


def test_public_extraction_copies_whole_kernels():
    fetch = _load("fetch_public")
    text = "#define TILE 32\n__global__\nvoid k(float* x) {\n  if (x) { x[0] = 1; }\n}\nint after;\n"
    assert fetch.extract(text, fetch.Piece("f", "line", r"#define TILE\b")) == "#define TILE 32"
    block = fetch.extract(text, fetch.Piece("f", "block", r"^void k\("))
    assert block.splitlines()[0] == "__global__" and block.splitlines()[-1] == "}"


def test_measured_and_intended_truth_score_alike_when_they_agree():
    """The measured-truth path of score.py reads measure.py's shape: build that shape from the intended
    labels of one file and the two scorings must agree."""
    score = _load("score")
    name = "kernels/barriers.cu"
    expected = corpus.expected_labels((ACCURACY / name).read_text())
    kernels = {}
    for kernel, labels in expected.items():
        measured = {c: labels[c] for c in ("uncoalesced", "bank_conflict", "divergence")}
        for category in ("race", "sync"):
            measured[category] = labels[category]
            measured[f"{category}_groups"] = [labels[category]] if labels[category] else []
        kernels[kernel] = {"labels": measured, "lines": {}}
    truth = {"files": {name: {"expected": expected, "kernels": kernels, "errors": []}}}
    for proven_only in (False, True):
        intended = score.score(truth, expected=True, proven_only=proven_only)
        measured = score.score(truth, expected=False, proven_only=proven_only)
        for category in corpus.CATEGORIES:
            a, b = intended[category], measured[category]
            assert (a.truth_items, a.truth_found, a.flagged, a.flagged_right) == (
                b.truth_items, b.truth_found, b.flagged, b.flagged_right
            ), category
