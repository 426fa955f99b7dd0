"""Issue 13's holes that CPU torch can show, through the real worker and the findings every caller uses
(`cudalens test`, `cudalens check --test`, the save-time test): the anti-cheat checks with codes and lines,
a clock replaced at import, a hung candidate killed after a limit derived from the reference's time."""

from __future__ import annotations

import argparse
import json
import textwrap
import time
from dataclasses import replace

import pytest

pytest.importorskip("torch")

from cudalens.cli import test_cmd
from cudalens.profiler.run_findings import outcome_findings
from cudalens.worker.child.results import TestResult, TimingResult
from cudalens.worker.run_job import run_job

PROBLEM = '''import time
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
'''


def write(tmp_path, body: str, name: str = "cand.py") -> tuple[str, str]:
    text = PROBLEM + textwrap.dedent(body)
    path = tmp_path / name
    path.write_text(text)
    return str(path), text


def line_of(text: str, needle: str) -> int:
    """The last line holding `needle` (the candidate comes after the reference)."""
    return max(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def cli(*argv: str) -> tuple[int, dict]:
    parser = argparse.ArgumentParser()
    test_cmd.add_arguments(parser)
    return test_cmd.run(parser.parse_args([*argv, "--device", "cpu", "--format", "json"])), {}


def test_kernel_file_returning_torch_ops_fails_test_with_cl907_at_its_line(tmp_path, capsys):
    # hole 2: a file that defines a kernel but whose ModelNew returns torch's result passed `cudalens test`
    path, text = write(tmp_path, '''
        swish_source = """
        __global__ void swish_kernel(const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = x[i] / (1.f + __expf(-x[i]));
        }
        """


        class ModelNew(nn.Module):
            def forward(self, x):
                return x * torch.sigmoid(x)
        ''')
    code, _ = cli(path)
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["test"]["status"] == "failed"
    assert all(t["passed"] for t in out["test"]["trials"])  # the values were right: only the check sees it
    [f] = out["findings"]
    assert (f["code"], f["rule"], f["severity"]) == ("CL907", "pytorch-fallback", "error")
    assert f["line"] == line_of(text, "return x * torch.sigmoid(x)")
    assert "torch.sigmoid() does the work in PyTorch" in f["message"]
    code, _ = cli(path, "--allow-torch-ops")
    assert code == 0, capsys.readouterr().out


def test_pytorch_candidate_without_a_kernel_may_use_torch(tmp_path, capsys):
    path, _ = write(tmp_path, '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return x * torch.sigmoid(x)
        ''')
    code, _ = cli(path)
    assert code == 0, capsys.readouterr().out


@pytest.mark.parametrize("patch", [
    "time.perf_counter = lambda: 0.0",
    "setattr(getattr(torch, 'cu' + 'da'), 'synchronize', lambda *a, **k: None)",
    "torch.cuda.Event.elapsed_time = lambda self, end: 0.001",
])
def test_clock_replaced_at_import_is_timing_manipulation_at_its_line(tmp_path, patch):
    # hole 3: this was reported as "the kernel crashed the worker"
    path, text = write(tmp_path, f'''
        {patch}


        class ModelNew(nn.Module):
            def forward(self, x):
                return x * torch.sigmoid(x)
        ''')
    outcome = run_job("test", {"path": path, "device": "cpu", "time": True, "budget_ms": 2})
    assert outcome.context_broken  # the worker, whose clocks it changed, retires
    findings = outcome_findings(path, text, outcome)
    assert [(f.code, f.rule, f.line) for f in findings] == [("CL906", "timing-manipulation", line_of(text, patch))]
    assert "timing manipulation" in TestResult.from_json(outcome.payload["test"]).message
    assert "crashed" not in findings[0].message


def test_clock_replaced_in_a_call_is_found_too(tmp_path):
    path, text = write(tmp_path, '''
        class ModelNew(nn.Module):
            def forward(self, x):
                time.perf_counter_ns = lambda: 0
                return x * torch.sigmoid(x)
        ''')
    outcome = run_job("test", {"path": path, "device": "cpu"})
    [f] = outcome_findings(path, text, outcome)
    assert (f.code, f.line) == ("CL906", line_of(text, "time.perf_counter_ns = "))


def test_hung_candidate_is_killed_after_the_limit_derived_from_the_reference(tmp_path):
    # hole 4: a hang cost the job's timeout (600 s by default)
    path, text = write(tmp_path, '''
        class ModelNew(nn.Module):
            def forward(self, x):
                time.sleep(300)
                return x * torch.sigmoid(x)
        ''')
    began = time.monotonic()
    outcome = run_job("test", {"path": path, "device": "cpu", "limit_floor_s": 2}, timeout_s=300)
    assert outcome.status == "timeout" and time.monotonic() - began < 60
    [f] = outcome_findings(path, text, outcome)
    assert f.code == "CL902"
    assert "trial 1/5: the candidate's call, limit 2 s (20× the reference's" in f.message
    assert "killed after 2 s" in f.message


def test_a_passing_test_reports_its_limit(tmp_path):
    path, _ = write(tmp_path, '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return x * torch.sigmoid(x)
        ''')
    outcome = run_job("test", {"path": path, "device": "cpu"})
    limits = TestResult.from_json(outcome.payload["test"]).limits
    assert limits.factor == 20 and limits.floor_s == 10 and limits.limit_s == 10
    assert 0 < limits.reference_s < 0.5


def test_the_compiled_reference_is_a_baseline_the_verdict_is_against(tmp_path, capsys):
    # issue 36: `--baseline compile` times torch.compile(reference), and the speedup (and CL903) is against it
    path, _ = write(tmp_path, '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return x * torch.sigmoid(x)
        ''')
    cli(path, "--time", "--budget-ms", "20", "--baseline", "compile")
    timing = TimingResult.from_json(json.loads(capsys.readouterr().out)["timing"])
    assert timing.baseline == "compile" and timing.compiled_reference is not None
    assert timing.speedup == timing.compiled_reference.median / timing.candidate.median
    assert f"speedup over torch.compile: {timing.describe_speedup()}" in test_cmd.render(path, None, timing, [])
    eager = replace(timing, baseline="eager")
    assert eager.speedup == timing.reference.median / timing.candidate.median
    assert TimingResult.from_json(timing.to_json()) == timing
