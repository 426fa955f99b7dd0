"""The real-world accuracy suite's tools: the run plan drawn from a program's own dispatch, the measurement
jobs and their tool command lines, truth assembled from tool results, and the scorer's matching of findings
against hardware truth and hand labels."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

ACCURACY = Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy"
sys.path.insert(0, str(ACCURACY))  # the scripts import their siblings by name, as they do when run

import fetch_realworld as fetch  # noqa: E402
import measure_realworld as measure_rw  # noqa: E402
import score_realworld as score_rw  # noqa: E402

# A program shaped like llm.c's dev/cuda files: kernels, launchers taking the block size, a dispatch over
# kernel_num, and a main that validates at every block size, then benchmarks.
PROGRAM = """\
#define ENABLE_BF16
#include "common.h"

__global__ void k1(float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = 0.0f;
}

template<int BlockSize>
__global__ void k2(float* out, int N) {
    __shared__ float s[BlockSize];
    s[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = helper(s);
}

__device__ float helper(float* s) { return s[0]; }

void k1_launch(float* out, int N, int block_size) {
    k1<<<ceil_div(N, block_size), block_size>>>(out, N);
}

void version1(float* out, int N, const int block_size) {
    k1_launch(out, N, block_size);
}

void version2(float* out, int N, const int block_size, bool atomic) {
    if (atomic) {
        k2<256><<<1, 256>>>(out, N);
    } else {
        k2<256><<<2, 256>>>(out, N);
    }
    k1_launch(out, N, block_size);
}

void run_with(void (*launch)(float*, int, int), float* out, int N, int block_size) {
    launch(out, N, block_size);
}

void dispatch(int kernel_num, float* out, int N, const int block_size) {
    switch (kernel_num) {
        case 1:
            version1(out, N, block_size);
            break;
        case 2:
            version2(out, N, block_size, false);
            break;
        case 3:
            run_with(k1_launch, out, N, block_size);
            break;
#if !defined(ENABLE_BF16)
        case 4:
            version1(out, N, block_size);
            break;
#endif
        case 5:
            cublasSgemm(handle, out);
            break;
        default:
            exit(1);
    }
}

int main(int argc, char **argv) {
    int kernel_num = atoi(argv[1]);
    int block_sizes[] = {32, 64, 128, 256, 512, 1024};
    for (int j = 0; j < 6; j++) {
        dispatch(kernel_num, out, N, block_sizes[j]);
    }
    int repeat_times = 1000;
    benchmark_kernel(repeat_times, dispatch, kernel_num, out, N, 256);
    return 0;
}
"""


def test_inactive_preprocessor_branches_are_blanked_in_place():
    text = "#define A\n#ifdef A\nx\n#else\ny\n#endif\n#if defined(B) || !defined(A)\nz\n#elif 1\nw\n#endif\n"
    active = fetch.active_text(text, set())
    assert active.splitlines() == ["", "", "x", "", "", "", "", "", "", "w", ""]
    assert fetch.active_text("#ifndef A\nq\n#endif\n", {"A"}).splitlines() == ["", "", ""]


def test_runs_follow_the_dispatch_and_skip_to_the_256_thread_launch():
    runs, notes = fetch.llmc_runs(PROGRAM, set())
    by_argv = {tuple(r["argv"]): {k["name"]: k["skip"] for k in r["kernels"]} for r in runs}
    # 256 is the 4th block size: 3 launches of each kernel come before it (one per validation call); the two
    # launch sites of k2 are alternatives (if/else), not two launches; a launcher passed as an argument runs.
    assert by_argv == {("1",): {"k1": 3}, ("2",): {"k2": 3, "k1": 3}, ("3",): {"k1": 3}}
    assert notes == ["kernel_num 5 launches no kernel of this file (a library call): not run"]


def test_the_target_block_is_the_nearest_to_256_threads():
    assert fetch.target_position("int block_sizes[] = {32, 64, 128, 256, 512};") == 3
    assert fetch.target_position("int sqrt_block_sizes[] = {4, 8, 16, 32};") == 2
    assert fetch.target_position("int block_sizes[] = {32, 64, 512, /*256,*/ 1024};") == 1
    assert fetch.target_position("int block_size = 128;") == 0


def test_patches_change_main_only_and_keep_every_line_in_place():
    text = "int repeat_times = 5;\n" + PROGRAM
    patched, applied = fetch.patched(text, (fetch.REPEAT_ONE,))
    assert len(patched.splitlines()) == len(text.splitlines())
    assert patched.splitlines()[0] == "int repeat_times = 5;"  # outside main: untouched
    assert [a["now"] for a in applied] == ["int repeat_times = 1;"]
    changed = [n for n, (a, b) in enumerate(zip(text.splitlines(), patched.splitlines(), strict=True)) if a != b]
    assert len(changed) == 1 and applied[0]["line"] == changed[0] + 1


def test_kernel_facts_see_shared_memory_and_barriers_through_calls():
    facts = fetch.kernel_facts({"p.cu": PROGRAM})
    assert facts["k1"] == {**facts["k1"], "template": False, "shared": False, "sync": False}
    assert facts["k2"]["template"] and facts["k2"]["shared"] and facts["k2"]["sync"]


def _manifest() -> dict:
    kernels = {"k1": {"file": "p/p.cu", "template": False, "shared": False, "sync": False},
               "k2": {"file": "p/p.cu", "template": True, "shared": True, "sync": True}}
    runs = [{"argv": ["1"], "kernels": [{"name": "k1", "skip": 3}]},
            {"argv": ["2"], "kernels": [{"name": "k2", "skip": 3}, {"name": "k1", "skip": 3}]},
            {"argv": ["3"], "kernels": [{"name": "k2", "skip": 0}]}]
    program = {"name": "proj/p", "project": "o/proj", "commit": "c0ffee", "folder": "p", "sources": ["p.cu"],
               "include_dirs": [], "flags": ["-O3", "-lcublas"], "files": ["p/p.cu", "p/p.h"], "kernels": kernels,
               "patches": [], "notes": [], "skip_reason": "", "runs": runs}
    skipped = {**program, "name": "proj/q", "skip_reason": "needs two GPUs"}
    return {"version": 1, "target_threads": 256, "projects": {"o/proj": {"commit": "c0ffee"}},
            "programs": [program, skipped]}


def test_plan_measures_a_plain_kernel_once_and_each_template_instantiation_apart():
    programs, jobs = measure_rw.plan(_manifest(), None)
    assert [p["name"] for p in programs] == ["canary/races", "proj/p"]
    canaries = [(j.tool, j.kernel) for j in jobs if j.program == "canary/races"]
    assert canaries == [("racecheck", "tile_transpose_unsynced"), ("racecheck", "tile_transpose_synced"),
                        ("synccheck", "sync_in_uneven_loop")]
    jobs = [j for j in jobs if j.program == "proj/p"]
    assert [(j.tool, j.key, j.skip) for j in jobs] == [
        ("ncu", "k1", 3),
        ("ncu", "k2 [2]", 3), ("racecheck", "k2 [2]", 3), ("synccheck", "k2 [2]", 3),
        ("ncu", "k2 [3]", 0), ("racecheck", "k2 [3]", 0), ("synccheck", "k2 [3]", 0),
    ]
    assert [j.program for j in measure_rw.plan(_manifest(), ["nothing"])[1]] == ["canary/races"] * 3


def test_tool_command_lines_pick_one_launch_of_one_kernel(tmp_path: Path):
    job = measure_rw.Job("proj/p", "k2 [2]", "layernorm_backward_kernel1", ("2",), 3, "racecheck")
    cmd = measure_rw.sanitizer_command(job, tmp_path / "bin", "--kernel-name")
    # the Itanium length prefix keeps `..._kernel1` from also matching `..._kernel10`
    assert cmd[cmd.index("--kernel-name") + 1] == "kns=26layernorm_backward_kernel1"
    assert cmd[cmd.index("--launch-skip") + 1] == "3" and cmd[cmd.index("--launch-count") + 1] == "1"
    assert cmd[-2:] == [str(tmp_path / "bin"), "2"]
    ncu = measure_rw.ncu_command(job, tmp_path / "bin", tmp_path / "r.ncu-rep")
    for option, value in (("--launch-skip", "3"), ("--launch-count", "1"), ("--replay-mode", "kernel"),
                          ("--clock-control", "none"), ("--section", "SourceCounters")):
        assert ncu[ncu.index(option) + 1] == value
    pattern = ncu[ncu.index("--kernel-name") + 1].removeprefix("regex:")
    assert re.search(pattern, "layernorm_backward_kernel1<float>")
    assert not re.search(pattern, "layernorm_backward_kernel10")


def _runner(tmp_path: Path) -> measure_rw.Runner:
    args = argparse.Namespace(out=tmp_path / "out", work=tmp_path / "work", dry_run=True, jobs=2, ncu_jobs=1,
                              timeout=30.0, budget=60.0, deadline=60.0)
    args.out.mkdir(parents=True, exist_ok=True)
    return measure_rw.Runner(args, {}, {}, time.monotonic())


def test_a_tool_run_is_stopped_at_its_timeout_and_at_the_deadline(tmp_path: Path):
    runner = _runner(tmp_path)
    runner.args.timeout = 0.5
    started = time.monotonic()
    code, out, _ = runner.execute(["sleep", "30"], tmp_path)
    assert code == 124 and "stopped after" in out and time.monotonic() - started < 10
    runner.args.timeout = 30.0
    threading.Timer(0.5, runner.stop_children).start()
    code, _, seconds = runner.execute(["sleep", "30"], tmp_path)
    assert code != 0 and seconds < 10 and runner.stopping
    assert runner.run_job(measure_rw.Job("p", "k", "k", (), 0, "ncu")) is None  # nothing starts after a stop


def test_build_command_puts_libraries_after_the_sources(tmp_path: Path):
    program = _manifest()["programs"][0]
    cmd = measure_rw.build_command(program, tmp_path, tmp_path / "bin", "sm_90", [])
    assert cmd[:3] == ["nvcc", "-lineinfo", "-arch=sm_90"]
    assert cmd[-2:] == [str(tmp_path / "p" / "p.cu"), "-lcublas"]


def test_truth_is_assembled_from_tool_results_and_survives_a_cut_line(tmp_path: Path):
    results = [
        {"program": "proj/p", "key": "k1", "kernel": "k1", "argv": ["1"], "skip": 3, "tool": "ncu", "rc": 0,
         "seconds": 1.0, "labels": {"uncoalesced": ["p/p.cu:6"], "bank_conflict": [], "divergence": []},
         "ratios": {}, "lines": {"p/p.cu:6": {"inst_executed": 4.0}},
         "kernel_metrics": {"launch__block_size": 256.0}},
        {"program": "proj/p", "key": "k2 [2]", "kernel": "k2", "argv": ["2"], "skip": 3, "tool": "racecheck",
         "rc": 1, "seconds": 2.0, "hits": [{"kind": "error", "message": "Race", "places": ["p/p.cu:12", "p/p.h:3"]}]},
        {"program": "proj/p", "key": "k2 [3]", "kernel": "k2", "argv": ["3"], "skip": 0, "tool": "ncu", "rc": 124,
         "seconds": 150.0, "error": "ncu exit 124"},
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in results) + '{"program": "proj/p", "ke')
    read = measure_rw.read_results(path)
    assert read == results
    canary = {"program": "canary/races", "key": "tile_transpose_unsynced", "kernel": "tile_transpose_unsynced",
              "argv": [], "skip": 0, "tool": "racecheck", "rc": 1, "seconds": 1.0,
              "hits": [{"kind": "error", "message": "Race", "places": ["races.cu:42", "races.cu:43"]}]}
    truth = measure_rw.assemble([*read, canary], _manifest(), {"proj/p": {"ok": True}}, {"gpu": "test"})
    assert truth["canary"] == {"racecheck tile_transpose_unsynced": True} and "canary/races" not in truth["programs"]
    kernels = truth["programs"]["proj/p"]["kernels"]
    assert kernels["k1"]["labels"]["uncoalesced"] == ["p/p.cu:6"] and kernels["k1"]["launch"]["block_size"] == 256.0
    assert kernels["k2 [2]"]["labels"]["race_groups"] == [["p/p.cu:12", "p/p.h:3"]]
    assert kernels["k2 [3]"]["measured"] == {"ncu": False} and kernels["k2 [3]"]["errors"] == ["ncu: ncu exit 124"]
    assert truth["programs"]["proj/q"]["skip_reason"] == "needs two GPUs"


# ---------------------------------------------------------------- scoring

SUITE = {
    "p/p.cu": "__global__ void k1(float* out, int N) {\n"  # 1
              "    int i = threadIdx.x * 32;\n"  # 2
              "    out[i] = 0.0f;\n"  # 3  uncoalesced (measured)
              "    out[threadIdx.x] = 1.0f;\n"  # 4  coalesced
              "    if (threadIdx.x % 2) {\n"  # 5  divergent branch ...
              "        out[i + 1] = 2.0f;\n"  # 6  ... measured on its body
              "    }\n"  # 7
              "}\n"  # 8
              "__global__ void k2(float* s) {\n"  # 9
              "    s[threadIdx.x] = 1;\n"  # 10  write ...
              "    float v = s[threadIdx.x + 1];\n"  # 11 ... read by the neighbour: race
              "}\n"  # 12
              "__global__ void k3(float* s) {\n"  # 13 never measured
              "    s[threadIdx.x * 2] = 0;\n"  # 14
              "}\n",
}


def _finding(line: int, code: str, severity: str = "warning", kernel: str = "k1", related=()) -> dict:
    return {"path": str(Path("p/p.cu")), "line": line, "end_line": line, "code": code, "severity": severity,
            "kernel": kernel, "message": "m",
            "related": [{"path": "p/p.cu", "line": n, "end_line": n, "message": "r"} for n in related]}


def _score(tmp_path: Path, findings: list[dict]):
    for name, text in SUITE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    manifest = _manifest()
    manifest["programs"][0]["kernels"]["k3"] = {"file": "p/p.cu", "template": False, "shared": True, "sync": False}
    truth = {"programs": {"proj/p": {"kernels": {
        "k1": {"kernel": "k1", "measured": {"ncu": True},
               "labels": {"uncoalesced": ["p/p.cu:3"], "divergence": ["p/p.cu:6"], "bank_conflict": []}},
        "k2 [2]": {"kernel": "k2", "measured": {"ncu": True, "racecheck": True, "synccheck": True},
                   "labels": {"race_groups": [["p/p.cu:10", "p/p.cu:11"]], "uncoalesced": []}},
    }}}}
    units = score_rw.units_from_truth(truth, manifest)
    parsed = [score_rw.Found(f["path"], f["line"], f["end_line"], f["code"], f["severity"] != "info", f["kernel"],
                             tuple((r["path"], r["line"], r["end_line"]) for r in f["related"]))
              for f in findings]
    unscored = score_rw.assign(parsed, units, manifest)
    by_code, by_category = score_rw.score_hardware(units, tmp_path)
    return by_code, by_category, unscored


def test_findings_are_scored_per_code_and_severity_against_the_measured_lines(tmp_path: Path):
    by_code, by_category, unscored = _score(tmp_path, [
        _finding(3, "CL101"),  # confirmed
        _finding(4, "CL101"),  # the hardware saw this line coalesced
        _finding(4, "CL104", "info"),  # likewise, as info
        _finding(5, "CL201"),  # on the branch: covers the body the idle lanes were measured on
        _finding(11, "CL303", "error", "k2", related=(10,)),
        _finding(14, "CL301", kernel="k3"),  # a kernel nobody measured
    ])
    cl101 = by_code["CL101", "warning/error"].tally
    assert (cl101.flagged, cl101.flagged_right, cl101.truth_found) == (2, 1, 1)
    assert by_code["CL104", "info"].tally.precision == 0.0
    assert by_code["CL201", "warning/error"].tally.precision == 1.0
    assert by_code["CL303", "warning/error"].tally.precision == 1.0
    assert by_category["uncoalesced", "all"].recall == 1.0
    assert by_category["uncoalesced", "warning/error"].precision == 0.5
    assert by_category["race", "all"].truth_items == 1
    assert [(f.code, f.kernel) for f in unscored] == [("CL301", "k3")]


def test_a_sanitizer_whose_canary_failed_answers_nothing(tmp_path: Path):
    truth = {"canary": {"racecheck tile_transpose_unsynced": False}, "programs": {"proj/p": {"kernels": {
        "k2": {"kernel": "k2", "measured": {"ncu": True, "racecheck": True}, "labels": {"race_groups": []}}}}}}
    units = score_rw.units_from_truth(truth, _manifest())
    assert units["proj/p", "k2"].measured == {"ncu"}


def test_a_race_finding_matches_through_its_related_access_and_misses_are_counted(tmp_path: Path):
    # k1 has no shared memory: with ncu measured it counts as race-free, so a race claimed there is false
    by_code, by_category, _ = _score(tmp_path, [_finding(10, "CL303", "error", "k2"), _finding(3, "CL303", kernel="k1")])
    assert by_code["CL303", "warning/error"].tally.flagged == 2
    assert by_code["CL303", "warning/error"].tally.flagged_right == 1
    _, by_category, _ = _score(tmp_path, [])
    assert by_category["divergence", "all"].misses == ["proj/p:k1 p/p.cu:6"]


def test_an_access_finding_matches_through_its_related_place_and_counts_once_per_line(tmp_path: Path):
    # a finding shown at a call (line 4) for a helper's access that ncu counts on the helper's line (3); two
    # findings on line 4 (two of the helper's accesses) are one flagged line, confirmed once
    by_code, by_category, _ = _score(tmp_path, [_finding(4, "CL101", related=(3,)), _finding(4, "CL101", related=(1,))])
    cl101 = by_code["CL101", "warning/error"].tally
    assert (cl101.flagged, cl101.flagged_right, cl101.truth_found) == (1, 1, 1)
    assert by_category["uncoalesced", "all"].recall == 1.0


def test_hand_labels_score_the_codes_no_counter_measures():
    found = [score_rw.Found("a.cu", 5, 5, "CL601", True, ""), score_rw.Found("a.cu", 9, 9, "CL701", False, "k"),
             score_rw.Found("a.cu", 12, 12, "CL503", False, "k"), score_rw.Found("a.cu", 3, 3, "CL101", True, "k")]
    labels = [{"file": "a.cu", "line": 5, "code": "CL601", "verdict": "false", "reason": "the result is needed"},
              {"file": "a.cu", "line": 9, "code": "CL701", "verdict": "true", "reason": "all lanes, one word"},
              {"file": "b.cu", "line": 1, "code": "CL701", "verdict": "true", "reason": "missed"}]
    scores, unlabelled = score_rw.score_hand(found, labels)
    assert scores["CL601", "warning/error"].tally.precision == 0.0
    assert scores["CL701", "info"].tally.precision == 1.0
    assert scores["CL701", "warning/error"].tally.misses == ["b.cu:1 (missed)"]
    assert [f.code for f in unlabelled] == ["CL503"]  # CL101 is scored against the hardware, not here


def test_the_report_section_replaces_itself(tmp_path: Path):
    target = tmp_path / "results.md"
    target.write_text("# Results\n\nbefore\n")
    score_rw.replace_section(target, f"{score_rw.BEGIN}\none\n{score_rw.END}")
    score_rw.replace_section(target, f"{score_rw.BEGIN}\ntwo\n{score_rw.END}")
    assert target.read_text() == f"# Results\n\nbefore\n\n{score_rw.BEGIN}\ntwo\n{score_rw.END}\n"


def test_every_hand_label_names_a_code_without_hardware_truth_and_gives_a_reason():
    labels = json.loads((ACCURACY / "realworld_labels.json").read_text())["labels"]
    assert labels
    for label in labels:
        assert score_rw.category_of(label["code"]) is None, label
        assert label["verdict"] in ("true", "false") and len(label["reason"]) > 20, label


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_dry_run_builds_and_writes_the_commands_it_would_run(tmp_path: Path):
    root = tmp_path / "suite"
    (root / "p").mkdir(parents=True)
    (root / "p" / "p.cu").write_text(
        "#include <cstdio>\n__global__ void k1(float* o) { o[threadIdx.x] = 1.0f; }\n"
        "int main() { float* o; cudaMalloc(&o, 1024); k1<<<1, 256>>>(o); cudaDeviceSynchronize(); return 0; }\n"
    )
    manifest = _manifest()
    program = manifest["programs"][0]
    program.update(flags=["-O3"], files=["p/p.cu"], runs=[{"argv": [], "kernels": [{"name": "k1", "skip": 0}]}],
                   kernels={"k1": {"file": "p/p.cu", "template": False, "shared": False, "sync": True}})
    (root / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "out"
    code = measure_rw.main(["--root", str(root), "--out", str(out), "--work", str(tmp_path / "work"), "--dry-run",
                            "--jobs", "2", "--ncu-jobs", "1"])
    assert code == 0
    commands = (out / "jobs.txt").read_text().splitlines()
    assert sorted(c.split()[0] for c in commands) == ["compute-sanitizer"] * 4 + ["ncu"]
    assert any("kns=23tile_transpose_unsynced" in c for c in commands)
    truth = json.loads((out / "truth.json").read_text())
    assert truth["measured"] is False and truth["programs"]["proj/p"]["build"]["ok"] is True
    assert {p.name for p in out.iterdir()} == {"jobs.txt", "results.jsonl", "truth.json", "raw.tar.gz"}


@pytest.mark.gpu
def test_one_sample_is_measured_on_the_gpu(tmp_path: Path):
    root = ACCURACY / "realworld"
    if not (root / "manifest.json").is_file():
        pytest.skip("run benchmarks/accuracy/fetch_realworld.py first")
    out = tmp_path / "out"
    assert measure_rw.main(["--out", str(out), "--work", str(tmp_path / "work"), "--only", "cuda-samples/transpose"]) == 0
    truth = json.loads((out / "truth.json").read_text())
    kernels = truth["programs"]["cuda-samples/transpose"]["kernels"]
    naive = kernels["transposeNaive"]["labels"]["uncoalesced"]
    assert any(place.endswith("transpose.cu:133") for place in naive)
    assert kernels["transposeCoalesced"]["labels"]["bank_conflict"]
