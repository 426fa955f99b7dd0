"""`cudalens model FILE`: the CI model ranked on CPU in a worker, its problem files, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudalens.cli.main import main
from cudalens.model.profile import profile_model, render_table, split_target


@pytest.fixture(scope="module")
def profiled(model_file):
    return profile_model(str(model_file), device="cpu", out_dir=str(model_file.parent / "out"), problems=3,
                         names=("group_norm",), iters=2, warmup=1)


def test_ranks_the_calls_by_time_with_shapes_and_advice(profiled):
    names = [c.name for c in profiled.calls]
    for expected in ("conv2d", "group_norm", "linear", "scaled_dot_product_attention"):
        assert expected in names
    assert profiled.clock == "cpu" and profiled.device == "cpu"
    times = [c.us for c in profiled.calls]
    assert times == sorted(times, reverse=True)
    assert abs(sum(c.share for c in profiled.calls) - 1) < 1e-6
    norm = next(c for c in profiled.calls if c.name == "group_norm")
    assert norm.module == "norm" and norm.calls == 1
    assert norm.advice == ("yes" if norm.share >= 0.01 else "no")
    assert norm.shapes() == "2×32×16×16 f32, 32 f32, 32 f32, num_groups=8, eps=1e-05"
    linear = next(c for c in profiled.calls if c.name == "linear")
    assert "strides 8192·1·256" in linear.shapes()  # the transposed activation, as the model passed it
    assert linear.advice == ("unlikely" if linear.share >= 0.01 else "no")  # CPU shares move with the load
    assert next(c for c in profiled.calls if c.name == "transpose").advice == "no"


def test_the_header_says_a_forward_in_the_rows_unit(profiled):
    """The header's figures are in µs like the rows, and say which sum the rows share out: "0.83 ms a forward"
    over a row of 2,208 µs/fwd read as a contradiction (the profiled forward is the longer one)."""
    first, second = render_table(profiled).splitlines()[:2]
    profiled_us = sum(c.us for c in profiled.calls)
    assert first.endswith(f"on cpu; a forward: {profiled.forward_ms * 1000:,.0f} µs unprofiled, "
                          f"{profiled_us:,.0f} µs of CPU time profiled"), first
    assert second == (f"calls by CPU time, µs per forward (self time of the ops and kernels inside each; they add "
                      f"up to {profiled_us:,.0f})")
    assert " ms" not in first


def test_problem_files_are_kernelbench_problems_with_the_models_weights(profiled, model_file):
    names = [Path(p).name for p in profiled.problems]
    assert names[0].startswith("group_norm_")  # named first; CPU times here are too noisy to rank on
    import torch

    source = Path(profiled.problems[0]).read_text()
    scope: dict = {"__file__": profiled.problems[0]}
    exec(compile(source, profiled.problems[0], "exec"), scope)
    inputs = scope["get_inputs"]()
    assert [tuple(t.shape) for t in inputs] == [(2, 32, 16, 16), (32,), (32,)]
    torch.manual_seed(0)
    block = __import__("runpy").run_path(str(model_file))["Block"]()  # model_and_inputs seeds 0 before building
    assert torch.equal(inputs[1], block.norm.weight.detach()) and torch.equal(inputs[2], block.norm.bias.detach())
    expected = torch.nn.functional.group_norm(inputs[0], 8, inputs[1], inputs[2], 1e-5)
    assert torch.equal(scope["Model"]()(*inputs), expected)
    assert scope["CUDALENS_CALL"]["function"] == "torch.nn.functional.group_norm"


def test_cli_prints_the_table_and_json(model_file, capsys):
    code = main(["model", str(model_file), "--device", "cpu", "--problems", "0", "--iters", "1",
                 "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["version"] == 1
    assert {"name", "share", "calls", "advice", "arguments"} <= set(data["calls"][0])


@pytest.mark.parametrize(("source", "target", "message"), [
    (None, "missing.py", "missing.py: no such file"),
    ("x = 1\n", "m.py", "m.py defines neither Model and get_inputs (KernelBench) nor model_and_inputs()"),
    ("def build():\n    return 3\n", "m.py:build", "m.py: build() must return (model, inputs), got int"),
    ("import torch\ndef model_and_inputs():\n    return torch.relu, [1]\n", "m.py", "not a torch.nn.Module"),
    ("import torch\ndef model_and_inputs():\n    raise ValueError('no weights here')\n", "m.py",
     "ValueError: no weights here"),
    ("def f(:\n", "m.py", "SyntaxError"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path, source, target, message):
    if source is not None:
        (tmp_path / "m.py").write_text(source)
    done = subprocess.run([sys.executable, "-m", "cudalens", "model", target, "--device", "cpu"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_file_and_entry():
    assert split_target("model.py:build") == ("model.py", "build")
    assert split_target("model.py") == ("model.py", None)
    assert split_target("C:model.py") == ("C:model.py", None)  # not an identifier after the colon


def test_the_model_never_sees_the_coders_key(tmp_path):
    (tmp_path / "m.py").write_text(
        "import os\n\ndef model_and_inputs():\n"
        "    raise ValueError('saw ' + repr([os.environ.get(k) for k in ('OPENAI_API_KEY', 'TEAM_LLM')]))\n")
    env = {**os.environ, "OPENAI_API_KEY": "sk-model-SECRET-9876", "TEAM_LLM": "sk-team-SECRET-5432"}
    done = subprocess.run([sys.executable, "-m", "cudalens", "model", "m.py", "--device", "cpu",
                           "--api-key-env", "TEAM_LLM"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 2 and "saw [None, None]" in done.stderr, done.stderr
    assert "SECRET" not in done.stderr
