"""Issue 13's holes on a real GPU, one test each, with 25_Swish candidates built by load_inline
(benchmarks/swish_cases.py) at 1024×65536 (256 MiB a tensor): the in-place candidate, a kernel beside torch's
result, a fake clock at import, a hung kernel, kernel time beside call time with its interval, and the
sanitizer on reduced inputs. Run on the GPU machine: `python -m pytest -m gpu tests/runtime/test_verdicts_gpu.py`.
"""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
swish_file = runpy.run_path(str(ROOT / "benchmarks" / "swish_cases.py"))["swish_file"]
ROWS, COLS = 1024, 65536


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    from cudalens.profiler.prebuild import prebuild

    folder = tmp_path_factory.mktemp("swish")
    out = {}
    for variant in ("honest", "in-place", "torch-result", "fake-clock", "hang"):
        out[variant] = folder / f"swish_{variant.replace('-', '_')}.py"
        out[variant].write_text(swish_file(ROWS, COLS, variant))
    [build] = prebuild([str(out["honest"])])  # one extension for all: the same CUDA source
    assert build.ok, build.message
    return out


def cli_test(path: Path, *extra: str) -> tuple[int, dict]:
    code = (
        "import argparse; from cudalens.cli import test_cmd; p = argparse.ArgumentParser(); "
        f"test_cmd.add_arguments(p); raise SystemExit(test_cmd.run(p.parse_args([{str(path)!r}, "
        f"'--format', 'json', *{list(extra)!r}])))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    return proc.returncode, json.loads(proc.stdout)


def test_honest_candidate_passes_with_kernel_time_and_interval(files):
    code, out = cli_test(files["honest"], "--time")
    assert code in (0, 1), out  # 1 only if it is slower (CL903)
    assert out["test"]["status"] == "passed", out["test"]["message"]
    cand = out["timing"]["candidate"]
    # CUPTI's kernel spans and CUDA events are two clocks: within 10 % of each other, the kernels inside the call
    assert cand["kernel_ms"] is not None and 0 < cand["kernel_ms"] <= cand["call_ms"] * 1.10
    assert any("swish_kernel" in name for name, _ in cand["kernels"])
    assert cand["ci_low_ms"] <= cand["median_ms"] <= cand["ci_high_ms"]
    assert out["timing"]["speedup_low"] <= out["timing"]["speedup"] <= out["timing"]["speedup_high"]
    assert out["test"]["limits"]["limit_s"] >= 10


def test_in_place_candidate_fails_with_cl908(files):
    # hole 1: it wrote the result into its input and returned the input (1.6× "faster")
    code, out = cli_test(files["in-place"], "--time")
    assert code == 1 and out["test"]["status"] == "failed" and out["timing"] is None
    assert {f["code"] for f in out["findings"]} == {"CL908"}
    assert {c["check"] for c in out["test"]["cheats"]} == {"inputs-modified", "output-aliases-input"}


def test_kernel_beside_torch_result_fails_with_cl907_on_its_line(files):
    # hole 2: `cudalens test` passed it as correct
    code, out = cli_test(files["torch-result"])
    assert code == 1 and out["test"]["status"] == "failed"
    [f] = out["findings"]
    text = files["torch-result"].read_text().splitlines()
    assert f["code"] == "CL907" and "torch.sigmoid" in text[f["line"] - 1]


def test_fake_clock_at_import_is_cl906_on_its_line(files):
    # hole 3: reported as "the kernel crashed the worker"
    code, out = cli_test(files["fake-clock"], "--time")
    assert code == 1
    [f] = out["findings"]
    text = files["fake-clock"].read_text().splitlines()
    assert f["code"] == "CL906" and "elapsed_time" in text[f["line"] - 1]
    assert "crashed" not in f["message"]


def test_hung_kernel_is_killed_after_its_derived_limit(files):
    # hole 4: a hang cost the default 600 s
    from cudalens.profiler.run_findings import outcome_findings
    from cudalens.worker.run_job import run_job

    path = files["hang"]
    began = time.monotonic()
    outcome = run_job("test", {"path": str(path), "limit_floor_s": 5}, timeout_s=600)
    took = time.monotonic() - began
    assert outcome.status == "timeout" and took < 60, (outcome.status, took, outcome.error)
    [f] = outcome_findings(str(path), path.read_text(), outcome)
    assert f.code == "CL902" and "limit 5 s (20× the reference's" in f.message


def test_sanitizer_runs_on_reduced_inputs_and_says_so(files):
    # hole 7: racecheck on a full-size problem ran past 300 s
    from cudalens.profiler.sanitizer import run_sanitizer

    result = run_sanitizer(str(files["honest"]), "racecheck", timeout=300)
    assert result.error is None, result.error
    assert result.inputs.startswith("scaled"), result.inputs
    assert "batch_size 1024→128" in result.inputs and "dim 65536→128" in result.inputs
    assert result.inputs.endswith("inputs [[128, 128]]") and result.error_count == 0
    print(result.describe())  # the time it took, for the report
