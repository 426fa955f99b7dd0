"""Issue 36: a problem written from a model carries the tensors the model passed to the call, and the test runs
one trial on them beside the random ones: a softmax of real, large attention logits is not a softmax of randn."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from cudalens.model.profile import profile_model
from cudalens.worker.child.results import TestResult
from cudalens.worker.run_job import run_job

MODEL = '''import torch
import torch.nn as nn


class Sharp(nn.Module):
    """Attention-like logits scaled up, as a low temperature does: far from randn's range."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        return torch.softmax(self.proj(x) * 200.0, dim=-1)


def model_and_inputs():
    return Sharp(), [torch.randn(4, 8, 16)]
'''

# right on randn (small logits), overflowing on the model's own (exp(200 · …) is inf): no max subtracted
NAIVE = '''

class ModelNew(nn.Module):
    def forward(self, input):
        e = torch.exp(input)
        return e / e.sum(dim=-1, keepdim=True)
'''
STABLE = '''

class ModelNew(nn.Module):
    def forward(self, input):
        e = torch.exp(input - input.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)
'''


@pytest.fixture(scope="module")
def problem(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("sharp")
    (folder / "sharp.py").write_text(MODEL)
    profile = profile_model(str(folder / "sharp.py"), device="cpu", out_dir=str(folder / "out"), problems=0,
                            names=("softmax",), iters=1, warmup=1)
    (path,) = profile.problems
    return Path(path)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"recorded_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_problem_carries_the_models_own_inputs(problem):
    import torch

    module = _load(problem)
    assert problem.with_name(problem.stem + ".recorded.pt").is_file()
    spec = importlib.util.spec_from_file_location("sharp_model", problem.parent.parent / "sharp.py")
    sharp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sharp)
    torch.manual_seed(0)  # as cudalens builds the model
    model, (x,) = sharp.model_and_inputs()
    (recorded,) = module.get_recorded_inputs()
    with torch.no_grad():
        assert torch.equal(recorded, model.proj(x) * 200.0)
    (drawn,) = module.get_inputs()
    assert drawn.shape == recorded.shape and drawn.abs().max() < 10 < recorded.abs().max()


def _test(problem: Path, body: str) -> TestResult:
    candidate = problem.with_name(problem.stem + body.count("amax") * "_stable" + "_candidate.py")
    candidate.write_text(problem.read_text() + body)
    outcome = run_job("test", {"path": str(candidate), "trials": 5, "seed": 42, "device": "cpu",
                               "allow_torch_ops": True}, timeout_s=120)
    assert outcome.status == "ok", outcome.error
    return TestResult.from_json(outcome.payload["test"])


def test_a_candidate_right_on_randn_fails_on_the_recorded_inputs(problem):
    test = _test(problem, NAIVE)
    assert [t.passed for t in test.trials] == [True] * 5 + [False]
    assert test.trials[-1].recorded and not any(t.recorded for t in test.trials[:5])
    assert test.message.startswith("5/6 trials passed; trial 5 (the inputs recorded from the model): ")


def test_an_honest_candidate_passes_every_trial(problem):
    test = _test(problem, STABLE)
    assert test.passed and len(test.trials) == 6 and test.trials[-1].recorded
