"""`cudalens test/profile/validate` as a user runs them, on CPU; and test outcomes → CL9xx findings."""

from __future__ import annotations

import argparse
import json
import shutil

import pytest

from cudalens.cli import profile_cmd, test_cmd, validate_cmd
from cudalens.profiler.run_findings import has_test, outcome_findings, timing_findings
from cudalens.worker.child.protocol import JobResult
from cudalens.worker.child.results import Measurement, TimingResult
from cudalens.worker.run_job import run_job


def parse(module, argv):
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args(argv)


def test_cli_test_passes_on_cpu(data_dir, capsys):
    pytest.importorskip("torch")
    code = test_cmd.run(parse(test_cmd, [str(data_dir / "kb_relu_right.py"), "--device", "cpu"]))
    out = capsys.readouterr().out
    assert code == 0, out
    assert "5/5 trials passed" in out and "trial 4 (seed" in out


def test_cli_test_failure_is_cl901_json(data_dir, capsys):
    pytest.importorskip("torch")
    code = test_cmd.run(parse(test_cmd, [str(data_dir / "kb_relu_solution_only.py"), "--device", "cpu", "--format", "json"]))
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["test"]["status"] == "failed"
    assert [f["code"] for f in data["findings"]] == ["CL901"]
    assert data["findings"][0]["line"] == 5  # class ModelNew


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_cli_test_of_a_kernel_without_a_gpu_says_so_as_the_editor_does(data_dir, capsys):
    # issue 32: it answered CL901 "CUDA_HOME environment variable is not set" after trying to build
    code = test_cmd.run(parse(test_cmd, [str(data_dir / "kb_relu_cuda_right.py"), "--time"]))
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("cudalens: testing kb_relu_cuda_right.py needs an NVIDIA GPU, and this machine has none: ")


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_cli_profile_without_a_gpu_says_so_as_the_editor_does(data_dir, capsys):
    # it said "ncu: Nsight Compute (ncu) not found" (and exit 0): the editor says the machine has no GPU
    code = profile_cmd.run(parse(profile_cmd, [str(data_dir / "kb_relu_cuda_right.py")]))
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("cudalens: profiling kb_relu_cuda_right.py needs an NVIDIA GPU, and this machine has none: ")
    assert "CL901" not in err and "CUDA_HOME" not in err


def test_cli_usage_errors(tmp_path, capsys):
    assert test_cmd.run(parse(test_cmd, [str(tmp_path / "none.py")])) == 2
    assert profile_cmd.run(parse(profile_cmd, [str(tmp_path / "none.cu")])) == 2
    assert validate_cmd.run(parse(validate_cmd, [str(tmp_path / "none.cu")])) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("ncu") is not None, reason="ncu is installed here: the GPU tests cover it")
@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="no GPU: the profile stops before ncu (test above)")
def test_cli_profile_without_ncu_says_so(data_dir, capsys):
    code = profile_cmd.run(parse(profile_cmd, [str(data_dir / "transpose.cu"), "--no-cache"]))
    assert code == 1
    assert "ncu" in capsys.readouterr().out


def test_outcome_findings_anchor_on_the_kernel(data_dir):
    path = str(data_dir / "transpose.cu")
    text = (data_dir / "transpose.cu").read_text()
    crash = JobResult("1", "test", "crash", {}, "worker died\nRuntimeError: CUDA error: an illegal memory access was encountered")
    [f] = outcome_findings(path, text, crash)
    assert f.code == "CL902" and f.line == 4 and f.kernel == "transpose_naive"
    assert "illegal memory access" in f.message
    timeout = outcome_findings(path, text, JobResult("1", "test", "timeout", {}, "killed after 30 s"))
    assert timeout[0].code == "CL902" and "did not finish" in timeout[0].message
    assert outcome_findings(path, text, JobResult("1", "test", "cancelled")) == []


def test_outcome_findings_from_a_real_job(data_dir):
    pytest.importorskip("torch")
    path = str(data_dir / "kb_relu_solution_only.py")
    outcome = run_job("test", {"path": path, "device": "cpu"})
    [f] = outcome_findings(path, (data_dir / "kb_relu_solution_only.py").read_text(), outcome)
    assert f.code == "CL901" and f.severity.value == "error"
    assert f.evidence_dict()["mismatches"] > 0


def test_slower_than_reference_is_cl903(data_dir):
    slow = TimingResult(Measurement.from_samples("c", [2.0] * 5), Measurement.from_samples("r", [1.0] * 5))
    [f] = timing_findings("k.cu", "__global__ void k() {}\n", slow)
    assert f.code == "CL903" and "2× slower [2–2]" in f.message
    fast = TimingResult(Measurement.from_samples("c", [1.0] * 5), Measurement.from_samples("r", [2.0] * 5))
    assert timing_findings("k.cu", "", fast) == []


def test_has_test(data_dir):
    assert has_test(str(data_dir / "transpose.cu"), (data_dir / "transpose.cu").read_text())
    assert has_test("x.py", "class ModelNew: pass")
    assert not has_test("x.cu", "__global__ void k() {}")


def test_profile_kernel_summary_from_a_raw_page(data_dir):
    from cudalens.profiler.ncu import csv_pages

    [first, _] = csv_pages.parse_raw((data_dir / "ncu_raw_page.csv").read_text())
    line = profile_cmd.metrics_summary(first)
    assert line.startswith("transpose_naive: time 41.3 us, SM 10%, memory 89%, DRAM 61%, occupancy 85%")
    assert "registers 16" in line and "threads/inst 32.0" in line


def test_validate_expands_folders(data_dir):
    found = {p.name for p in validate_cmd.expand([str(data_dir)])}
    assert {"transpose.cu", "bank_conflict.cu", "shared_race.cu", "illegal_access.cu"} <= found


def test_user_prints_do_not_reach_stdout(tmp_path, data_dir, capfd):
    pytest.importorskip("torch")
    noisy = tmp_path / "noisy.py"
    noisy.write_text("import os\nprint('building...')\nos.system('echo from a compiler')\n" + (data_dir / "kb_relu_right.py").read_text())
    code = test_cmd.run(parse(test_cmd, [str(noisy), "--device", "cpu", "--format", "json"]))
    out, _ = capfd.readouterr()
    assert code == 0
    assert json.loads(out)["test"]["status"] == "passed"  # the prints stayed in the worker


@pytest.mark.skipif(shutil.which("ncu") is not None, reason="ncu is installed here: the GPU tests cover validate")
def test_cli_validate_without_tools_reports_and_leaves_totals_empty(data_dir, capsys):
    code = validate_cmd.run(parse(validate_cmd, [str(data_dir / "transpose.cu"), "--no-cache"]))
    out = capsys.readouterr().out
    assert code == 0
    assert "ncu: Nsight Compute (ncu) not found" in out
    assert "coalescing" in out and "—" in out
