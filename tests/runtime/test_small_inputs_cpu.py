"""The smallest inputs a reference accepts, for compute-sanitizer (issue 13, hole 7): the reference's
get_small_inputs() hook, else KernelBench's module-level sizes scaled down and the module run again, checked
against the reference; run as the profile target runs them, on CPU torch."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cudalens.profiler.sanitizer import ran_on
from cudalens.worker.child.lib import small_inputs
from cudalens.worker.jobs import child_command


@pytest.fixture(scope="module")
def small():
    return small_inputs


@pytest.mark.parametrize(("size", "reduced"), [
    (16, 16), (128, 128), (4096, 128), (16384, 128), (393216, 96), (4095, 95), (129, 65), (1000, 72), (4128, 64),
])
def test_sizes_shrink_and_keep_their_alignment(small, size, reduced):
    assert small.scaled(size) == reduced


def test_only_the_sizes_get_inputs_reads_are_rewritten(small):
    source = textwrap.dedent('''\
        import torch
        batch_size = 4096
        N = 2048
        M = N * 2          # derived: follows N when the module runs again
        dim = 1            # a reduction dimension: small already
        unrelated = 100000
        def get_inputs():
            return [torch.randn(batch_size, M).sum(dim)]
        def get_init_inputs():
            return []
        ''')
    reduction = small.Reduction()
    out = reduction(Path("p.py"), source)
    assert "batch_size = 128\n" in out and "N = 128\n" in out and "unrelated = 100000" in out
    assert out.count("\n") == source.count("\n")
    assert reduction.describe() == "scaled batch_size 4096→128, N 2048→128 (the reference module run again with these ints)"


PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return {forward}


batch_size = {rows}
dim = {cols}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
{extra}

class ModelNew(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)
'''


def target(tmp_path, forward="x * torch.sigmoid(x)", rows=512, cols=4096, extra="") -> str:
    path = tmp_path / "p.py"
    path.write_text(PROBLEM.format(forward=forward, rows=rows, cols=cols, extra=extra))
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"path": str(path), "device": "cpu", "reps": 1, "inputs": "small"}))
    proc = subprocess.run(child_command(sys.executable, "jobs.profile_target", str(payload)), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return ran_on(proc.stderr)


def test_the_target_runs_kernelbench_sizes_scaled(tmp_path):
    assert target(tmp_path) == (
        "scaled batch_size 512→128, dim 4096→128 (the reference module run again with these ints), "
        "inputs [[128, 128]]"
    )


def test_the_references_hook_comes_first(tmp_path):
    hook = "\n\ndef get_small_inputs():\n    return [torch.randn(3, 5)]\n"
    assert target(tmp_path, extra=hook) == "reduced: the reference's get_small_inputs(), inputs [[3, 5]]"


def test_a_reference_that_refuses_the_reduced_sizes_runs_at_full_size(tmp_path):
    said = target(tmp_path, forward="x.view(-1, 4096) * 2", rows=2, cols=4096)
    assert said.startswith("full size: the reference does not accept the reduced sizes (scaled dim 4096→128")
    assert said.endswith("inputs [[2, 4096]]")


def test_what_was_run_is_read_from_the_targets_output():
    out = 'noise\ncudalens-inputs: {"how": "full size", "shapes": [[4, 4]]}\n========= ERROR SUMMARY: 0 errors\n'
    assert ran_on(out) == "full size, inputs [[4, 4]]"
    assert ran_on("nothing announced") == ""
