"""The correctness harness on CPU torch with pure-PyTorch candidates."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from cudalens.worker.child.results import TestResult  # noqa: E402


class Relu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def signed_inputs():
    return [torch.randn(64, 33)]


def positive_inputs():
    return [torch.rand(64, 33)]


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def run(correctness, candidate, inputs=signed_inputs, reference=Relu, **kw):
    result = correctness.check(reference, lambda: Fn(candidate), inputs, device="cpu", **kw)
    # what crosses the worker boundary is JSON: the parent reads it back
    return TestResult.from_json(json.loads(json.dumps(result.to_json())))


def test_right_candidate_passes_five_trials_with_reported_seeds(correctness):
    result = run(correctness, lambda x: x.clamp_min(0))
    assert result.status == "passed", result.message
    assert len(result.trials) == 5
    assert len({t.seed for t in result.trials}) == 5
    assert (result.atol, result.rtol, result.dtype) == (1e-4, 1e-4, "float32")
    assert result.degenerate == ()


def test_seeds_are_reproducible(correctness):
    a = run(correctness, lambda x: x.clamp_min(0), seed=7)
    b = run(correctness, lambda x: x.clamp_min(0), seed=7)
    assert [t.seed for t in a.trials] == [t.seed for t in b.trials]


def test_wrong_candidate_reports_first_mismatch(correctness):
    def wrong(x):
        y = torch.relu(x).clone()
        y[3, 5] = y[3, 5] + 1.0
        return y

    result = run(correctness, wrong)
    assert result.status == "failed"
    bad = result.first_failed_trial.first_failure
    assert bad.reason == "values"
    assert bad.first_mismatch.index == (3, 5)
    assert bad.first_mismatch.actual == pytest.approx(bad.first_mismatch.expected + 1.0)
    assert bad.mismatches == 1
    assert bad.max_abs_error == pytest.approx(1.0)
    assert "first at [3, 5]" in result.message


def test_within_tolerance_passes_beyond_fails(correctness):
    assert run(correctness, lambda x: torch.relu(x) + 5e-5).passed
    assert not run(correctness, lambda x: torch.relu(x) + 1e-3).passed


def test_nan_never_passes(correctness):
    def nan_one(x):
        y = torch.relu(x).clone()
        y[0, 1] = float("nan")
        return y

    result = run(correctness, nan_one, atol=1e9, rtol=1e9)
    bad = result.first_failed_trial.first_failure
    assert result.status == "failed" and bad.reason == "nan"
    assert bad.first_mismatch.index == (0, 1)


def test_inf_never_passes(correctness):
    def inf_one(x):
        y = torch.relu(x).clone()
        y[2, 2] = float("inf")
        return y

    result = run(correctness, inf_one, atol=1e9, rtol=1e9)
    assert result.first_failed_trial.first_failure.reason == "inf"


def test_shape_mismatch_reported(correctness):
    result = run(correctness, lambda x: torch.relu(x)[:, :32])
    bad = result.first_failed_trial.first_failure
    assert bad.reason == "shape"
    assert bad.shape == (64, 32) and bad.expected_shape == (64, 33)


def test_dtype_mismatch_reported(correctness):
    result = run(correctness, lambda x: torch.relu(x).double())
    assert result.first_failed_trial.first_failure.reason == "dtype"


def test_missing_output_reported(correctness):
    class Two(torch.nn.Module):
        def forward(self, x):
            return x, x * 2

    result = run(correctness, lambda x: x, reference=Two)
    assert result.first_failed_trial.first_failure.reason == "missing"


def test_degenerate_all_zero_reference_is_flagged(correctness):
    class Zero(torch.nn.Module):
        def forward(self, x):
            return x * 0

    result = run(correctness, lambda x: torch.zeros_like(x), reference=Zero)
    assert result.passed
    assert any("all zeros" in r for r in result.degenerate)
    assert "weak test" in result.summary()


def test_constant_reference_is_flagged(correctness):
    class Ones(torch.nn.Module):
        def forward(self, x):
            return torch.ones_like(x)

    result = run(correctness, lambda x: torch.ones_like(x), reference=Ones)
    assert any("constant" in r for r in result.degenerate)


def test_candidate_returning_its_input(correctness):
    # Signed inputs: returning x is simply wrong.
    assert run(correctness, lambda x: x).status == "failed"
    # KernelBench's ReLU uses torch.rand (non-negative): the values are right, and the test says it is weak;
    # the output is the input's memory, which the reference's is not (CL908)
    weak = run(correctness, lambda x: x, inputs=positive_inputs)
    assert weak.status == "failed"
    assert all(o.passed for t in weak.trials for o in t.outputs)
    assert any("equals input 0" in r for r in weak.degenerate)
    assert [(c.check, c.code) for c in weak.cheats] == [("output-aliases-input", "CL908")]


def test_non_random_inputs_are_flagged(correctness):
    fixed = torch.randn(8, 8)
    result = run(correctness, torch.relu, inputs=lambda: [fixed.clone()])
    assert any("same outputs on every trial" in r for r in result.degenerate)


def test_candidate_exception_is_an_error_with_message(correctness):
    def boom(x):
        raise ValueError("bad launch config")

    result = run(correctness, boom)
    assert result.status == "error"
    assert "ValueError: bad launch config" in result.message
    assert "Traceback" in result.traceback
    assert result.trials[0].error.startswith("ValueError")


def test_crash_markers_mark_crashed(correctness):
    def crash(x):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    assert run(correctness, crash).status == "crashed"


def test_reference_nan_is_a_reference_error(correctness):
    class NanRef(torch.nn.Module):
        def forward(self, x):
            return x * float("nan")

    result = run(correctness, lambda x: x, reference=NanRef)
    assert result.status == "reference-error"


def test_fp16_tolerance(correctness):
    class Half(torch.nn.Module):
        def forward(self, x):
            return x.half() * 2

    result = run(correctness, lambda x: (x.half() * 2 + 0.005), reference=Half)
    assert (result.atol, result.dtype) == (1e-2, "float16")
    assert result.passed


def test_missing_output_with_aliasing_reports_both(correctness):
    class Two(torch.nn.Module):
        def forward(self, x):
            return x.clone(), x * 2

    result = run(correctness, lambda x: x, reference=Two)
    trial = result.trials[0]
    assert trial.outputs[0].passed and trial.outputs[-1].reason == "missing"
    assert [c.check for c in trial.cheats] == ["output-aliases-input"]


class Swish(torch.nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def test_candidate_writing_into_its_input_and_returning_it_fails(correctness):
    # issue 13, hole 1: the values are right, so only the input check and the aliasing check can see it
    def in_place(x):
        return x.mul_(torch.sigmoid(x))

    result = run(correctness, in_place, reference=Swish)
    assert result.status == "failed"
    assert all(o.passed for t in result.trials for o in t.outputs)
    assert {(c.check, c.code) for c in result.cheats} == {("inputs-modified", "CL908"), ("output-aliases-input", "CL908")}
    assert "changed input 0 (2112 of 2112 elements)" in result.message


def test_candidate_changing_its_input_but_returning_a_new_tensor_fails(correctness):
    def scribbles(x):
        y = x * torch.sigmoid(x)
        x.zero_()
        return y

    result = run(correctness, scribbles, reference=Swish)
    assert [c.check for c in result.cheats] == ["inputs-modified"]


def test_in_place_reference_allows_the_same_in_place_candidate(correctness):
    class ReluInPlace(torch.nn.Module):
        def forward(self, x):
            return x.relu_()

    assert run(correctness, lambda x: x.clamp_min_(0), reference=ReluInPlace).passed
    # one that leaves the input as it was changes it differently from the reference
    other = run(correctness, lambda x: x.clamp_min(0), reference=ReluInPlace)
    assert [c.check for c in other.cheats] == ["inputs-modified"]
    assert "changes it in place" in other.cheats[0].message


def test_views_pass_only_where_the_reference_returns_a_view(correctness):
    class Flatten(torch.nn.Module):
        def forward(self, x):
            return x.view(-1)

    assert run(correctness, lambda x: x.reshape(-1), reference=Flatten).passed
    aliased = run(correctness, lambda x: x.reshape(-1), reference=lambda: Fn(lambda x: x.flatten().clone()))
    assert [c.check for c in aliased.cheats] == ["output-aliases-input"]
