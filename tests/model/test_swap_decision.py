"""The swap decision (model/swap.py) and the whole-model table it feeds: a kernel goes into a mode only where
its measured time beats what it replaces there, and the reason is kept and printed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cudalens.model.integration import Accepted
from cudalens.model.swap import Mode, decide, whole_model_check
from cudalens.model.verify import CandidateTest, Integration, render
from cudalens.worker.child.results import Measurement, TimingResult


def ms(median: float, spread: float = 0.002) -> Measurement:
    """Twenty samples around `median`, ±`spread` of it."""
    return Measurement.from_samples("t", [median * (1 + spread * ((i % 5) - 2) / 2) for i in range(20)])


def test_a_kernel_slower_than_eager_is_not_swapped():
    d = decide("softmax", Mode.EAGER, ms(0.491), ms(0.280))
    assert not d.swapped
    assert d.reason == "0.57× vs eager softmax: not swapped (slower)"


def test_a_kernel_faster_than_eager_is_swapped():
    d = decide("group_norm", Mode.EAGER, ms(0.100), ms(0.170))
    assert d.swapped and round(d.speedup, 2) == 1.70
    assert d.reason == "1.70× vs eager group_norm: swapped"


def test_each_mode_against_its_own_baseline():
    kernel, eager, compiled = ms(0.100), ms(0.170), ms(0.080)
    assert decide("group_norm", Mode.EAGER, kernel, eager).swapped
    d = decide("group_norm", Mode.COMPILED, kernel, compiled)
    assert not d.swapped and d.reason == "0.80× vs torch.compile group_norm: not swapped (slower)"


def test_a_win_within_the_timings_spread_is_not_swapped():
    d = decide("softmax", Mode.EAGER, ms(0.100, spread=0.2), ms(0.101, spread=0.2))
    assert not d.swapped
    assert d.reason.startswith("1.01× vs eager softmax: not swapped (within the timing's spread, ")


def test_untimed_or_failed_is_not_swapped():
    assert decide("softmax", Mode.COMPILED, ms(0.1), None).reason == "not timed vs torch.compile softmax: not swapped"
    d = decide("softmax", Mode.EAGER, None, None, failed="output 0 mismatch")
    assert not d.swapped and d.reason == "failed its test (output 0 mismatch): not swapped"


def _test(name: str, function: str, kernel: float, eager: float, compiled: float) -> CandidateTest:
    accepted = Accepted(Path(f"{name}.py"), Path(f"{name}.optimized.py"), {"function": function})
    op = function.rpartition(".")[2]
    timing = TimingResult(ms(kernel), ms(eager), ms(compiled))
    decisions = (decide(op, Mode.EAGER, timing.candidate, timing.reference),
                 decide(op, Mode.COMPILED, timing.candidate, timing.compiled_reference))
    return CandidateTest(accepted, True, "passed", timing, decisions)


def test_the_table_says_what_was_swapped_in_which_mode_and_why_not():
    norm = _test("group_norm_1", "torch.nn.functional.group_norm", 0.10, 0.17, 0.12)
    softmax = _test("softmax_2", "torch.nn.functional.softmax", 0.49, 0.28, 0.20)
    result = Integration(Path("cudalens_kernels.py"), (norm, softmax),
                         timings={"eager": (ms(5.0), ms(4.0)), "compiled": (ms(3.0), ms(2.9))},
                         mode_only=ms(5.003), replaced=1)
    assert norm.modes == ("eager", "compiled") and softmax.modes == ()
    text = render(result)
    assert text.splitlines()[:8] == [
        "group_norm_1.optimized.py: accepted",
        "  the op alone: kernel 0.1 ms, eager 0.17 ms, torch.compile 0.12 ms",
        "  eager: 1.70× vs eager group_norm: swapped",
        "  torch.compile: 1.20× vs torch.compile group_norm: swapped",
        "softmax_2.optimized.py: accepted",
        "  the op alone: kernel 0.49 ms, eager 0.28 ms, torch.compile 0.2 ms",
        "  eager: 0.57× vs eager softmax: not swapped (slower)",
        "  torch.compile: 0.41× vs torch.compile softmax: not swapped (slower)",
    ]
    assert text.splitlines()[-4:] == [
        "whole model    before    after     speedup  swapped",
        "eager          5.000 ms  4.000 ms  1.25×    group_norm",
        "torch.compile  3.000 ms  2.900 ms  1.03×    group_norm",
        "  of which the swap alone, eager: +0.003 ms (5.003 ms through its checks with no kernel run)",
    ]
    assert "  torch.compile: 1 call(s) of the compiled graph replaced by a kernel" in text


def test_a_mode_with_no_kernel_is_the_unchanged_model():
    softmax = _test("softmax_2", "torch.nn.functional.softmax", 0.49, 0.28, 0.20)
    result = Integration(Path("cudalens_kernels.py"), (softmax,),
                         timings={"eager": (ms(6.578), None), "compiled": (ms(5.553), None)})
    assert render(result).splitlines()[-3:] == [
        "whole model    before    after        speedup  swapped",
        "eager          6.578 ms  (unchanged)  1.00×    none",
        "torch.compile  5.553 ms  (unchanged)  1.00×    none",
    ]


def test_a_mode_the_kernels_made_slower_keeps_none_of_them():
    # the CPU smoke run of the benchmark: batch_norm kernels 1.15–2.75× against the compiled op alone, the
    # compiled ResNet 0.87× with them (Inductor had fused the op into its neighbours)
    norm = _test("batch_norm_1", "torch.nn.functional.batch_norm", 0.10, 0.08, 0.27)
    assert norm.modes == ("compiled",)
    (eager, compiled) = whole_model_check(Mode.COMPILED, ms(1212.6), ms(1401.4), norm.decisions)
    assert eager == norm.decisions[0] and not compiled.swapped
    assert compiled.reason == ("2.70× vs torch.compile batch_norm, but the whole model ran 0.87× with the kernels: "
                               "not swapped")
    assert whole_model_check(Mode.COMPILED, ms(3.0), ms(2.9), norm.decisions) == norm.decisions
    result = Integration(Path("cudalens_kernels.py"), (replace(norm, decisions=(eager, compiled)),),
                         timings={"compiled": (ms(1212.6), ms(1401.4))})
    assert render(result).splitlines()[-2:] == [
        "whole model    before       after        speedup  swapped",
        "torch.compile  1212.600 ms  (unchanged)  1.00×    none: 1401.400 ms with the kernels (0.87×), not kept",
    ]
