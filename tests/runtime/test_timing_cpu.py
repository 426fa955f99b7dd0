"""Timing logic on CPU (perf_counter path) and the Measurement statistics."""

from __future__ import annotations

import json

import pytest

from cudalens.profiler.results import Measurement, TimingResult


def test_measurement_statistics():
    m = Measurement.from_samples("k", [1.0, 2.0, 3.0, 4.0, 5.0])
    assert m.median == 3.0
    assert m.min == 1.0
    assert m.mean == 3.0
    assert m.iqr == pytest.approx(2.0)  # inclusive quartiles 2 and 4
    assert m.spread == pytest.approx(2 / 3)
    assert any("spread 67%" in w for w in m.warnings)


def test_tight_samples_have_no_warning():
    m = Measurement.from_samples("k", [1.00, 1.01, 0.99, 1.00, 1.02, 1.00])
    assert m.warnings == ()


def test_few_samples_warn():
    m = Measurement.from_samples("k", [1.0, 1.0])
    assert any("only 2 samples" in w for w in m.warnings)


def test_measurement_json_round_trip():
    m = Measurement.from_samples("k", [1.0, 1.5, 1.2, 1.1, 1.3])
    back = Measurement.from_json(json.loads(json.dumps(m.to_json())))
    assert back == m
    t = TimingResult(m, Measurement.from_samples("r", [2.6] * 5))
    assert TimingResult.from_json(json.loads(json.dumps(t.to_json()))).speedup == pytest.approx(2.6 / 1.2)


def test_repetitions_follow_the_budget(timing):
    assert timing.repetitions(0.5, 100.0) == 200
    assert timing.repetitions(50.0, 100.0) == timing.MIN_REPS
    assert timing.repetitions(1e-6, 100.0) == timing.MAX_REPS
    assert timing.repetitions(0.0, 100.0) == timing.MAX_REPS


def test_measure_on_cpu_counts_calls_and_flushes(timing):
    calls = []
    clock = timing._Clock()
    flushes = []
    clock.flush = lambda: flushes.append(1)
    m = timing.measure(lambda: calls.append(1), "noop", clock, budget_ms=1.0, max_reps=50)
    n = len(m.samples_ms)
    assert timing.MIN_REPS <= n <= 50
    assert len(calls) == 1 + timing.ESTIMATE_CALLS + n  # warm-up, estimate, timed
    assert len(flushes) == timing.ESTIMATE_CALLS + n  # before every timed call
    assert m.method == "perf-counter" and not m.l2_flushed


def test_compare_on_cpu_uses_same_inputs(timing):
    torch = pytest.importorskip("torch")
    x = torch.randn(256, 256)
    seen = []

    def candidate(a):
        seen.append(a)
        return a.relu()

    result = timing.compare(candidate, lambda a: torch.relu(a), [x], device="cpu", budget_ms=2.0)
    assert all(a is x for a in seen)
    assert result.candidate.samples_ms and result.reference.samples_ms
    assert result.speedup > 0


def test_suspicious_speedup_is_a_warning(timing):
    torch = pytest.importorskip("torch")
    x = torch.randn(512, 512)
    result = timing.compare(lambda a: a, lambda a: (a @ a).relu(), [x], device="cpu", budget_ms=5.0)
    assert result.speedup > timing.SUSPICIOUS_SPEEDUP
    assert any("faster than eager PyTorch" in w for w in result.candidate.warnings)
