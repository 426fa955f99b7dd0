"""The run-time checks on a real GPU: inline-CUDA KernelBench solutions, .cu kernels with references,
timing, ncu line attribution, compute-sanitizer and validate. Run on the GPU machine:
`python -m pytest -m gpu tests/runtime -q` (the extensions are built once, in parallel, first)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

DATA = Path(__file__).resolve().parent / "data"

BUILT = ["kb_relu_cuda_right.py", "kb_relu_cuda_wrong.py", "transpose.cu", "bank_conflict.cu", "illegal_access.cu", "shared_race.cu"]


@pytest.fixture(scope="module", autouse=True)
def built():
    from cudalens.profiler.prebuild import prebuild

    builds = prebuild([str(DATA / name) for name in BUILT])
    failed = [f"{b.path}: {b.message}" for b in builds if not b.ok]
    assert not failed, failed
    return builds


def test_kernelbench_inline_cuda_right_and_wrong(test_job):
    right = test_job.run({"path": str(DATA / "kb_relu_cuda_right.py")})
    assert right["test"]["status"] == "passed", right["test"]["message"]
    assert right["test"]["device"].startswith("cuda")
    wrong = test_job.run({"path": str(DATA / "kb_relu_cuda_wrong.py")})
    assert wrong["test"]["status"] == "failed"
    bad = wrong["test"]["trials"][0]["outputs"][0]
    # the skipped last element holds the poison (NaN) or whatever the allocator left: never the right value
    assert bad["reason"] in ("nan", "values")
    assert list(bad["first_mismatch"]["index"]) == [1023, 4095]


def test_cu_kernel_with_reference_and_timing(test_job):
    out = test_job.run({"path": str(DATA / "transpose.cu"), "time": True, "budget_ms": 50})
    assert out["test"]["status"] == "passed", out["test"]["message"]
    timing = out["timing"]
    assert timing["candidate"]["method"] == "cuda-events" and timing["candidate"]["l2_flushed"]
    assert len(timing["candidate"]["samples_ms"]) >= 5 and timing["speedup"] > 0
    assert out["kernels"] == ["transpose_naive"]


def test_illegal_access_is_cl902_in_a_child():
    code = (
        "import json, argparse; from cudalens.cli import test_cmd; p = argparse.ArgumentParser(); "
        "test_cmd.add_arguments(p); "
        f"raise SystemExit(test_cmd.run(p.parse_args([{str(DATA / 'illegal_access.cu')!r}, '--format', 'json'])))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert [f["code"] for f in data["findings"]] == ["CL902"], data


def test_ncu_lands_on_the_uncoalesced_line():
    from cudalens.profiler.ncu.line_hints import line_findings
    from cudalens.profiler.ncu.profile import ProfileRequest, profile_file

    path = DATA / "transpose.cu"
    profile = profile_file(ProfileRequest(str(path), use_cache=False))
    assert profile.error is None, profile.error
    assert [k.base_name for k in profile.kernels] == ["transpose_naive"]
    findings = line_findings(str(path), path.read_text(), profile.lines)
    assert [(f.code, f.line) for f in findings if "sectors" in f.message] == [("CL904", 8)], findings


def test_ncu_lands_on_the_bank_conflicted_line():
    from cudalens.profiler.ncu.line_hints import line_findings
    from cudalens.profiler.ncu.profile import ProfileRequest, profile_file

    path = DATA / "bank_conflict.cu"
    profile = profile_file(ProfileRequest(str(path), use_cache=False))
    assert profile.error is None, profile.error
    findings = line_findings(str(path), path.read_text(), profile.lines)
    assert [f.line for f in findings if "bank-conflict" in f.message] == [12], findings
    k = profile.kernels[0]
    assert k.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")


def test_sanitizers_point_at_the_lines():
    from cudalens.profiler.sanitizer import run_sanitizer, sanitizer_findings

    race_path = DATA / "shared_race.cu"
    race = run_sanitizer(str(race_path), "racecheck")
    assert race.error is None, race.error
    lines = {f.line for f in sanitizer_findings(str(race_path), race_path.read_text(), race.issues)}
    assert lines & {7, 8}, race.output_tail
    oob_path = DATA / "illegal_access.cu"
    oob = run_sanitizer(str(oob_path), "memcheck")
    assert 6 in {f.line for f in sanitizer_findings(str(oob_path), oob_path.read_text(), oob.issues)}, oob.output_tail


def test_validate_on_the_corpus():
    from cudalens.profiler.validate import summarize, validate_file

    files = [validate_file(str(DATA / name)) for name in ("transpose.cu", "bank_conflict.cu", "shared_race.cu")]
    report = summarize(files)
    totals = {t.category: t for t in report.totals}
    assert totals["coalescing"].found >= 1 and totals["coalescing"].precision
    assert totals["bank-conflicts"].found >= 1
    assert totals["races"].found >= 1
    print(report.table())


@pytest.mark.parametrize("problem_index", [0, 1, 2])
def test_optimize_problems_build_on_the_fast_path_and_keep_their_verdicts(problem_index, test_job, tmp_path):
    """The split build (docs/fast-builds.md) gives the module load_inline would: the fast candidates pass, the
    wrong ones fail, and the log says the fast path built them."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from optimize_problems import PROBLEMS

    problem = PROBLEMS[problem_index]
    for kind, expected in (("fast", "passed"), ("wrong", "failed")):
        path = tmp_path / f"{kind}.py"
        path.write_text(getattr(problem, kind))
        out = test_job.run({"path": str(path)})
        assert out["test"]["status"] == expected, (kind, out["test"]["message"], out["builds"])
        assert any(line.startswith("fast ") for line in out["builds"]), out["builds"]


def test_candidates_that_rename_their_extension_share_one_bindings_build(test_job, tmp_path):
    """An LLM renames its `load_inline` extension at will: the bindings (torch's headers, ≈ 15 s) are built once
    for a set of declarations, whatever the name; the kernels are each candidate's own."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from optimize_problems import PROBLEMS

    fast = PROBLEMS[0].fast
    built = []
    for i, name in enumerate(("relu_first_name", "relu_second_name")):
        path = tmp_path / f"{name}.py"
        source = fast.replace("__global__", f"/* variant {i} */ __global__", 1)
        path.write_text(source.replace('load_inline(name="', f'load_inline(name="{name}_', 1))
        out = test_job.run({"path": str(path)})
        assert out["test"]["status"] == "passed", (name, out["test"]["message"], out["builds"])
        [line] = [b for b in out["builds"] if b.startswith("fast ")]
        built.append(re.search(r"\((\w+)/(\w+)\)", line).groups())  # "fast NAME (MODULE/KERNELS) in …"
    (first_module, first_kernels), (second_module, second_kernels) = built
    assert first_module == second_module and first_kernels != second_kernels
