"""Timing logic on CPU (perf_counter path) and the Measurement statistics."""

from __future__ import annotations

import itertools
import json

import pytest

from cudalens.worker.child.results import Measurement, TimingResult


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


def test_every_timed_call_gets_inputs_of_its_own_the_same_for_both_sides(timing):
    torch = pytest.importorskip("torch")
    seen: dict[str, list] = {"candidate": [], "reference": []}

    def draw(k):
        return [torch.full((64, 64), float(k))]

    def side(name):
        def call(a):
            seen[name].append((float(a[0, 0]), id(a), a.data_ptr()))
            return a.relu()
        return call

    result = timing.compare(side("candidate"), side("reference"), draw, device="cpu", budget_ms=2.0)
    assert result.candidate.samples_ms and result.reference.samples_ms and result.speedup > 0
    for calls in seen.values():
        ks = [k for k, _, _ in calls]
        assert ks == [float(i) for i in range(len(ks))]  # call k on draw k: a new draw every call
        # the previous call's inputs are held while the next are drawn: never the same object or address twice in a row
        assert all(a[1:] != b[1:] for a, b in itertools.pairwise(calls))
    n = min(len(seen["candidate"]), len(seen["reference"]))
    assert [k for k, *_ in seen["candidate"][:n]] == [k for k, *_ in seen["reference"][:n]]


def test_a_candidate_that_stops_computing_once_its_trials_are_over_fails_while_it_is_timed(timing, correctness):
    """Issue 32, class 1: it computes for the trials and returns what it remembered afterwards ("2025× faster")."""
    torch = pytest.importorskip("torch")

    class Model(torch.nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(x)

    class Lazy(torch.nn.Module):
        calls, last = 0, None

        def forward(self, x):
            Lazy.calls += 1
            if Lazy.calls <= 6:  # the probe's and the five trials' calls
                Lazy.last = x * torch.sigmoid(x)
            return Lazy.last

    def get_inputs():
        return [torch.randn(128, 256)]

    test = correctness.check(Model, Lazy, get_inputs, device="cpu")
    assert test.passed  # five trials cannot see it
    fresh = correctness.FreshInputs(get_inputs, torch.device("cpu"), 7)
    check = correctness.TimedCheck(Model(), fresh, test.atol, test.rtol)
    with pytest.raises(timing.TimedCallWrong) as wrong:
        timing.compare(Lazy(), Model(), fresh, check=check, device="cpu", budget_ms=1.0)
    assert wrong.value.check == "timed-output-wrong"
    assert "changed behaviour between the correctness trials and the timing" in wrong.value.message


def test_an_honest_candidate_has_its_timed_calls_checked_and_passes(timing, correctness):
    torch = pytest.importorskip("torch")
    fresh = correctness.FreshInputs(lambda: [torch.randn(64, 64)], torch.device("cpu"), 3)
    check = correctness.TimedCheck(lambda x: x.relu(), fresh, 1e-4, 1e-4)
    result = timing.compare(lambda x: x.clamp(min=0), lambda x: x.relu(), fresh, check=check, device="cpu",
                            budget_ms=1.0)
    # the last and a random call of each batch, and the last profiled one (none on a CPU)
    assert result.checked_calls >= 3 and fresh.reproducible


def test_a_candidate_replaying_results_for_inputs_it_has_seen_fails_while_it_is_timed(timing, correctness):
    """Issue 32, class 1: CUDA-L1's policy replayed results remembered by input pointer. On a GPU the caching
    allocator hands the same addresses out again; here (malloc) the key is the shape: the same class, and the
    fresh draws' new values defeat either."""
    torch = pytest.importorskip("torch")
    remembered: dict[tuple, object] = {}

    def by_address(x):
        if tuple(x.shape) not in remembered:
            remembered[tuple(x.shape)] = x.relu()
        return remembered[tuple(x.shape)]

    fresh = correctness.FreshInputs(lambda: [torch.randn(64, 64)], torch.device("cpu"), 5)
    with pytest.raises(timing.TimedCallWrong):
        timing.compare(by_address, lambda x: x.relu(), fresh,
                       check=correctness.TimedCheck(lambda x: x.relu(), fresh, 1e-4, 1e-4), device="cpu", budget_ms=1.0)


def test_inputs_that_get_inputs_does_not_reproduce_are_kept_for_the_check(correctness):
    torch = pytest.importorskip("torch")
    rng = iter(range(10_000))
    fresh = correctness.FreshInputs(lambda: [torch.full((4,), float(next(rng)))], torch.device("cpu"), 0)
    assert not fresh.reproducible
    args = fresh(3)
    drawn = float(args[0][0])
    args[0].zero_()  # what a candidate might do to its input
    assert torch.equal(fresh.again(3)[0], torch.full((4,), drawn)) and drawn != 0.0


class ScriptedClock:
    """The perf-counter clock's shape with the sample each timed call reads scripted: the repetition logic
    (batches, the interval target, the caps) without the machine's noise."""

    method = "perf-counter"

    def __init__(self, samples):
        self.samples = iter(samples)
        self.flush = lambda: None

    def new_pair(self):
        return [0.0]

    def start(self, pair):
        pair[0] = next(self.samples)

    def stop(self, pair):
        pass

    def sync(self):
        pass

    def elapsed_ms(self, pair):
        return pair[0]


def cycle(values):
    while True:
        yield from values


def test_steady_samples_stop_after_the_first_batch(timing):
    m = timing.measure(lambda: None, "steady", ScriptedClock(cycle([1.0, 1.001, 0.999])), budget_ms=20.0)
    assert len(m.samples_ms) == 20  # 20 ms of budget at 1 ms a call
    assert m.relative_halfwidth <= 0.02 and not any("interval" in w for w in m.warnings)


def test_noisy_samples_repeat_until_the_interval_is_within_two_percent(timing):
    # issue 13, hole 6: the reference was timed 6 times at 16 % IQR and the speedup printed with two decimals
    import random

    rng = random.Random(1)
    noisy = (10.0 * (1 + rng.uniform(-0.16, 0.16)) for _ in range(100_000))
    m = timing.measure(lambda: None, "noisy", ScriptedClock(noisy), budget_ms=60.0, max_ms=100_000.0)
    assert len(m.samples_ms) > 6 * 4  # batches doubled past the budget's six calls
    assert m.relative_halfwidth <= 0.02
    lo, hi = m.interval
    assert lo <= m.median <= hi


def test_the_cap_ends_repetition_and_says_so(timing):
    import random

    rng = random.Random(2)
    noisy = (10.0 * (1 + rng.uniform(-0.5, 0.5)) for _ in range(100_000))
    m = timing.measure(lambda: None, "capped", ScriptedClock(noisy), budget_ms=60.0)  # cap: 10 × 60 ms
    assert 600 <= sum(m.samples_ms) <= 1300 and len(m.samples_ms) < 150
    assert any("repetition cap came first" in w for w in m.warnings)
    assert timing.measure(lambda: None, "n", ScriptedClock(noisy), budget_ms=1e9, max_reps=40).samples_ms.__len__() == 40


def test_median_interval_uses_the_order_statistics():
    from cudalens.worker.child.results import median_interval

    xs = list(range(1, 11))  # n = 10: ranks 2 and 9 (Conover's table)
    assert median_interval(xs) == (2, 9)
    assert median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)  # too few: the range


def test_speedup_is_shown_with_its_interval():
    ref = Measurement.from_samples("r", [16.0, 16.2, 15.8, 16.1, 15.9, 16.0, 16.3, 15.7, 16.0, 16.1])
    cand = Measurement.from_samples("c", [10.0, 10.1, 9.9, 10.0, 10.05, 9.95, 10.0, 10.1, 9.9, 10.0])
    t = TimingResult(cand, ref)
    lo, hi = t.speedup_interval
    assert lo < t.speedup < hi
    assert t.describe_speedup() == f"{t.speedup:.3g}× [{lo:.3g}–{hi:.3g}]"
    back = TimingResult.from_json(json.loads(json.dumps(t.to_json())))
    assert back.describe_speedup() == t.describe_speedup()


def test_cpu_timings_have_no_kernel_time(timing):
    torch = pytest.importorskip("torch")
    x = torch.randn(64, 64)
    result = timing.compare(lambda a: a * 2, lambda a: a + a, lambda k: [x], device="cpu", budget_ms=2.0)
    assert result.candidate.kernel_ms is None and result.candidate.kernels == ()
    assert result.to_json()["candidate"]["call_ms"] == result.candidate.median
