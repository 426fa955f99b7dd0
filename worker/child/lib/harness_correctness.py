"""The correctness harness: a candidate against its PyTorch reference over several seeded trials.

The contract (DESIGN.md "Correctness test", "Evaluation"): ≥ 5 trials with fresh inputs from `get_inputs()`
under a reported seed; memory poisoned with NaN before each candidate run so a kernel that skips elements cannot
pass on the reference's leftovers; tolerances by dtype (fp32 1e-4, fp16/bf16 1e-2: KernelBench's
`get_tolerance_for_precision`, after torchbench); NaN/Inf in the candidate never pass; the inputs unchanged
after the candidate ran and its outputs not sharing memory with them, unless the reference's behave the same;
each candidate call under a time limit derived from the reference's measured call; references that cannot tell
right from wrong are flagged. In each trial the candidate runs first, on a copy of the inputs, and the
reference after it on the originals, so that no output of the reference for those inputs exists while the
candidate runs. `TimedCheck` compares timed calls the same way (harness_timing). Standard library at top level,
torch inside functions.
"""

from __future__ import annotations

import math
import random
import time
import traceback
from typing import Any

from .. import anti_cheat, results
from .harness_timing import TimedCallWrong

DEFAULT_TRIALS = 5
PROBE_SEED = 0x5EED  # the probe's inputs are drawn under a seed apart from the trials'
TIMING_SEED = 0x71AED  # and the timed calls' under another
# A candidate call may take this many times the reference's measured call, and never less than the floor
# (first-call costs: lazy module loading, a cuBLAS handle): a hung kernel costs seconds, not the job's 600 s.
LIMIT_FACTOR = 20.0
LIMIT_FLOOR_S = 10.0
# atol = rtol per dtype name. Integers and booleans compare exactly.
TOLERANCES = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2, "float64": 1e-7}
# Messages of errors after which the CUDA context is unusable: the worker must be replaced.
_CRASH_MARKERS = (
    "illegal memory access",
    "illegal instruction",
    "misaligned address",
    "device-side assert",
    "unspecified launch failure",
    "CUDA error: an illegal",
    "cudaErrorIllegalAddress",
    "CUDA_ERROR_ILLEGAL_ADDRESS",
)


def tolerance_for(dtype_name: str) -> float:
    return TOLERANCES.get(dtype_name, 0.0)


def trial_seeds(seed: int, trials: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(2**31) for _ in range(trials)]


def is_crash(message: str) -> bool:
    return any(marker.lower() in message.lower() for marker in _CRASH_MARKERS)


def flatten(value: Any) -> list[Any]:
    """A model's outputs as a flat list (tensors, numbers), in order."""
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in flatten(item)]
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in flatten(value[key])]
    return [value]


def _dtype_name(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.")


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for size in reversed(shape):
        out.append(flat % size if size else 0)
        flat //= size if size else 1
    return tuple(reversed(out))


def _scalar(t: Any) -> float | None:
    try:
        return float(t)
    except (TypeError, ValueError, RuntimeError):
        return None


def compare(position: int, expected: Any, actual: Any, atol: float | None, rtol: float | None) -> Any:
    """One output against the reference's: shape, dtype, non-finite values, then values within tolerance."""
    import torch

    Check = results.OutputCheck
    if not isinstance(expected, torch.Tensor):
        expected = torch.as_tensor(expected)
    if not isinstance(actual, torch.Tensor):
        try:
            actual = torch.as_tensor(actual)
        except (TypeError, ValueError, RuntimeError):
            return Check(position, False, "type", f"output {position} is a {type(actual).__name__}, expected a tensor")
    shape, expected_shape = tuple(actual.shape), tuple(expected.shape)
    common = {
        "shape": shape, "expected_shape": expected_shape, "dtype": _dtype_name(actual),
        "expected_dtype": _dtype_name(expected), "numel": expected.numel(),
    }
    if shape != expected_shape:
        return Check(position, False, "shape", f"output {position} has shape {list(shape)}, expected {list(expected_shape)}", **common)
    if actual.dtype != expected.dtype:
        return Check(position, False, "dtype", f"output {position} is {common['dtype']}, expected {common['expected_dtype']}", **common)
    tol = tolerance_for(common["expected_dtype"])
    atol = tol if atol is None else atol
    rtol = tol if rtol is None else rtol
    if expected.is_complex():
        expected, actual = torch.view_as_real(expected), torch.view_as_real(actual)
    # on the device, in float32 (float64 for float64 and integers): KernelBench-sized outputs hold 10⁹ elements
    work = torch.float32 if expected.is_floating_point() and expected.dtype != torch.float64 else torch.float64
    e = expected.detach().to(work).flatten()
    a = actual.detach().to(e.device, work).flatten()
    if e.numel() == 0:
        return Check(position, True, **common)
    diff = (a - e).abs()
    finite = torch.isfinite(diff)
    max_abs = float(diff[finite].max()) if bool(finite.any()) else math.inf
    # relative error only where the expected value is not itself within tolerance of zero: dividing by a
    # ReLU's zeros would report 1e12 for an absolute error of 1
    scaled = finite & (e.abs() > max(atol, 1e-12))
    max_rel = float((diff[scaled] / e.abs()[scaled]).max()) if bool(scaled.any()) else (0.0 if bool(finite.all()) else math.inf)
    nonfinite = ~torch.isfinite(a)
    if bool(nonfinite.any()):
        flat = int(torch.nonzero(nonfinite)[0])
        kind = "nan" if bool(torch.isnan(a).any()) else "inf"
        mismatch = results.Mismatch(_unravel(flat, shape), _scalar(e[flat]), _scalar(a[flat]))
        return Check(
            position, False, kind,
            f"output {position} holds {int(nonfinite.sum())} non-finite values ({kind.upper()} first at "
            f"{list(mismatch.index)}; expected {mismatch.expected:g})",
            mismatches=int(nonfinite.sum()), max_abs_error=max_abs, max_rel_error=max_rel,
            first_mismatch=mismatch, **common,
        )
    bad = diff > atol + rtol * e.abs()
    count = int(bad.sum())
    if count == 0:
        return Check(position, True, mismatches=0, max_abs_error=max_abs, max_rel_error=max_rel, **common)
    flat = int(torch.nonzero(bad)[0])
    mismatch = results.Mismatch(_unravel(flat, shape), _scalar(e[flat]), _scalar(a[flat]))
    return Check(
        position, False, "values",
        f"output {position}: {count} of {e.numel()} elements differ beyond atol={atol:g}, rtol={rtol:g}; first at "
        f"{list(mismatch.index)}: expected {mismatch.expected:.6g}, got {mismatch.actual:.6g} "
        f"(max abs error {max_abs:.3g}, max rel error {max_rel:.3g})",
        mismatches=count, max_abs_error=max_abs, max_rel_error=max_rel, first_mismatch=mismatch, **common,
    )


def degenerate_reasons(outputs: list[Any], inputs: list[Any], atol: float) -> list[str]:
    """Why these reference outputs cannot tell a right kernel from a wrong one."""
    import torch

    reasons = []
    for i, out in enumerate(outputs):
        if not isinstance(out, torch.Tensor) or out.numel() == 0 or out.dtype == torch.bool:
            continue
        o = out.detach().to(torch.float64 if out.dtype == torch.float64 else torch.float32)
        if not bool(torch.isfinite(o).all()):
            reasons.append(f"reference output {i} holds NaN/Inf")
            continue
        peak = float(o.abs().max())
        if peak == 0.0:
            reasons.append(f"reference output {i} is all zeros: a kernel that writes nothing but zeros passes")
        elif peak <= atol:
            reasons.append(f"reference output {i} is near zero (max |x| = {peak:.3g} ≤ atol {atol:g}): zeros pass")
        elif o.numel() > 1 and float(o.max()) == float(o.min()):
            reasons.append(f"reference output {i} is constant ({float(o.flatten()[0]):g} everywhere)")
        for j, inp in enumerate(inputs):
            # an output in its input's memory is the reference working in place, not a weak test
            if (isinstance(inp, torch.Tensor) and (inp.shape, inp.dtype, inp.device) == (out.shape, out.dtype, out.device)
                    and not _overlap(out, inp)):
                if torch.equal(inp.detach(), out.detach()):
                    reasons.append(
                        f"reference output {i} equals input {j} on these inputs: a kernel that returns its "
                        "input passes (make get_inputs() exercise the operation)"
                    )
    return reasons


def to_device(value: Any, device: Any, dtype: Any = None) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        value = value.to(device)
        if dtype is not None and value.is_floating_point():
            value = value.to(dtype)
        return value
    return value


def make_inputs(get_inputs: Any, device: Any, dtype: Any = None) -> list[Any]:
    """`get_inputs()` with the device as the default for new tensors (no host-side generation and copy of
    gigabytes), and anything still elsewhere moved there."""
    import torch

    with torch.device(device):
        return [to_device(x, device, dtype) for x in get_inputs()]


def _clone(values: list[Any]) -> list[Any]:
    import torch

    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def poison(sizes: list[int], device: Any) -> None:
    """Leaves NaN in the blocks the caching allocator will hand to the candidate's outputs next: one block of
    each size in `sizes` (bytes: the reference's outputs on the trial before, or on the probe)."""
    import torch

    if getattr(device, "type", "cpu") != "cuda":
        return
    blocks = [torch.full(((n + 3) // 4,), float("nan"), device=device) for n in sizes]
    del blocks  # freed, not returned to the driver: the next same-sized allocations reuse them


def output_sizes(outputs: list[Any]) -> list[int]:
    import torch

    return [o.numel() * o.element_size() for o in outputs if isinstance(o, torch.Tensor)]


def _sync(device: Any) -> None:
    import torch

    if getattr(device, "type", "cpu") == "cuda":
        torch.cuda.synchronize(device)


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check(
    make_reference: Any,
    make_candidate: Any,
    get_inputs: Any,
    *,
    trials: int = DEFAULT_TRIALS,
    seed: int = 42,
    device: str | None = None,
    precision: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    on_trial: Any = None,
    watch: Any = None,
    limit_factor: float = LIMIT_FACTOR,
    limit_floor_s: float = LIMIT_FLOOR_S,
    recorded: Any = None,
) -> Any:
    """Runs the trials and returns a `TestResult` (never raises for the user's code going wrong).
    `recorded`: a `get_inputs` giving the inputs a whole model passed to this call (a problem written by
    `cudalens model`): one more trial on them, after the random ones (a softmax of real attention logits is
    not a softmax of randn).
    `on_trial(k, n)` is called before trial k of n (0-based): the editor's progress shows "trial 3/5".
    `watch(stage, limit_s)` is called before each candidate call with the seconds it may take (a `CallLimit`
    from the reference's measured call) and after it with None: the job makes them the worker's deadline."""
    import torch

    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = getattr(torch, precision) if precision else None
    TestResult = results.TestResult
    watch = watch or (lambda stage, limit_s: None)
    try:
        reference = place(make_reference(), dev, dtype)
    except Exception as exc:
        return TestResult("reference-error", device=str(dev), message=f"the reference failed to build: {_one_line(exc)}",
                          traceback=traceback.format_exc())
    try:
        candidate = place(make_candidate(), dev, dtype)
    except Exception as exc:
        status = "crashed" if is_crash(str(exc)) else "error"
        return TestResult(status, device=str(dev), message=f"the candidate failed to build: {_one_line(exc)}",
                          traceback=traceback.format_exc())

    done: list[Any] = []
    degenerate: list[str] = []
    first_outputs: list[Any] | None = None
    dtype_name, used_atol, used_rtol = "", 0.0, 0.0
    with torch.no_grad():
        # the reference once before any trial, on inputs of its own: the first call's costs paid, the candidate's
        # first limit known, the sizes of its outputs to poison (the candidate runs before it in every trial)
        torch.manual_seed(trial_seeds(seed ^ PROBE_SEED, 1)[0])
        try:
            limit, sizes = _probe(reference, make_inputs(get_inputs, dev, dtype), dev, limit_factor, limit_floor_s)
        except Exception as exc:
            return TestResult("reference-error", device=str(dev), message=f"the reference raised: {_one_line(exc)}",
                              traceback=traceback.format_exc())
        plan = [(trial_seed, get_inputs) for trial_seed in trial_seeds(seed, trials)]
        plan += [(seed, recorded)] if recorded is not None else []
        for trial, (trial_seed, draw) in enumerate(plan):
            is_recorded = draw is recorded
            if on_trial is not None:
                on_trial(trial, len(plan))
            torch.manual_seed(trial_seed)
            try:
                inputs = make_inputs(draw, dev, dtype)
            except Exception as exc:
                if not is_recorded:
                    raise
                return TestResult("reference-error", tuple(done), device=str(dev),
                                  message=f"the recorded inputs could not be loaded: {_one_line(exc)}", limits=limit)
            candidate_inputs = _clone(inputs)  # before poisoning: the clone must not take the poisoned blocks
            poison(sizes, dev)
            watch(f"trial {trial + 1}/{len(plan)}: the candidate's call, limit {limit.describe()}", limit.limit_s)
            try:
                actual = flatten(candidate(*candidate_inputs))
                _sync(dev)
            except Exception as exc:
                message = _one_line(exc)
                done.append(results.TrialResult(trial, trial_seed, False, error=message, recorded=is_recorded))
                crashed = is_crash(str(exc))
                return TestResult(
                    "crashed" if crashed else "error", tuple(done), dtype_name, used_atol, used_rtol, str(dev),
                    tuple(degenerate),
                    f"the candidate {'crashed' if crashed else 'raised'} on trial {trial} ({done[-1].inputs_text}): "
                    f"{message}",
                    traceback.format_exc(), limits=limit,
                )
            finally:
                watch(f"trial {trial + 1}/{len(plan)}: comparing", None)
            # the reference runs last, on the original inputs: while the candidate ran, no output of the reference
            # for these inputs existed for it to find and copy (pygpubench's garbage-collector walk)
            changed_by_candidate = {j: inputs[j].clone() for j in changed_inputs(inputs, candidate_inputs)}
            try:
                began = time.perf_counter()
                expected = flatten(reference(*inputs))
                _sync(dev)
                reference_s = time.perf_counter() - began
            except Exception as exc:
                return TestResult("reference-error", tuple(done), device=str(dev),
                                  message=f"the reference raised on trial {trial}: {_one_line(exc)}",
                                  traceback=traceback.format_exc(), limits=limit)
            limit = results.CallLimit(max(reference_s, limit.reference_s), limit_factor, limit_floor_s)
            sizes = output_sizes(expected)
            first = next((o for o in expected if isinstance(o, torch.Tensor)), None)
            if first is not None and not dtype_name:
                dtype_name = _dtype_name(first)
                tol = tolerance_for(dtype_name)
                used_atol = tol if atol is None else atol
                used_rtol = tol if rtol is None else rtol
            if trial == 0:
                degenerate += degenerate_reasons(expected, inputs, used_atol)
                first_outputs = expected
            elif trial == 1 and not is_recorded and first_outputs and _same(first_outputs, expected):
                degenerate.append("the reference gives the same outputs on every trial: get_inputs() may not be random")
            checks = _compare_all(expected, actual, atol, rtol)
            cheats = input_cheats(inputs, candidate_inputs, changed_by_candidate, expected, actual, atol, rtol)
            passed = all(c.passed for c in checks) and not cheats
            done.append(results.TrialResult(trial, trial_seed, passed, tuple(checks), cheats=tuple(cheats),
                                            recorded=is_recorded))
            del inputs, candidate_inputs, changed_by_candidate, expected, actual

    failed = next((t for t in done if not t.passed), None)
    if any("NaN/Inf" in r for r in degenerate):
        status, message = "reference-error", "the reference produced NaN/Inf: " + "; ".join(degenerate)
    elif failed is not None:
        status = "failed"
        passed_n = sum(t.passed for t in done)
        message = f"{passed_n}/{len(done)} trials passed; trial {failed.trial} ({failed.inputs_text}): {failed.failure_message}"
    else:
        status, message = "passed", ""
    cheats = tuple({c.check: c for t in done for c in t.cheats}.values())  # each check once, from its first trial
    return TestResult(status, tuple(done), dtype_name, used_atol, used_rtol, str(dev), tuple(degenerate), message,
                      cheats=cheats, limits=limit)


def _probe(reference: Any, inputs: list[Any], dev: Any, factor: float, floor_s: float) -> tuple[Any, list[int]]:
    """One reference call before the trials: the candidate's first `CallLimit` and the output sizes to poison."""
    began = time.perf_counter()
    outputs = flatten(reference(*inputs))
    _sync(dev)
    return results.CallLimit(time.perf_counter() - began, factor, floor_s), output_sizes(outputs)


def input_cheats(reference_inputs: list[Any], candidate_inputs: list[Any], changed_by_candidate: dict[int, Any],
                 expected: list[Any], actual: list[Any], atol: float | None, rtol: float | None) -> list[Any]:
    """Run-time anti-cheat findings of one trial, both sides having run on copies of the same inputs: an input
    the candidate left otherwise than the reference did (changed where the reference leaves it, or not the way
    the reference changes it in place); an output sharing memory with an input where the reference's does not.
    `changed_by_candidate`: the inputs the candidate changed, as they were before (the reference ran on them)."""
    found = []
    for j in changed_inputs(reference_inputs, candidate_inputs):
        same = compare(j, reference_inputs[j], candidate_inputs[j], atol, rtol)
        if same.passed:
            continue
        before = changed_by_candidate.get(j)
        if before is not None and not differing(before, reference_inputs[j]):
            n = differing(before, candidate_inputs[j])
            found.append(anti_cheat.finding(
                "inputs-modified",
                f"the candidate changed input {j} ({n} of {before.numel()} elements), which the reference "
                "leaves unchanged: a kernel that writes its result into its input",
                0,
            ))
        else:
            found.append(anti_cheat.finding(
                "inputs-modified",
                f"input {j} after the candidate's call differs from the reference's, which changes it in "
                f"place: {same.message.removeprefix(f'output {j}').lstrip(': ')}",
                0,
            ))
    for k, j in sorted(aliasing(actual, candidate_inputs) - aliasing(expected, reference_inputs)):
        found.append(anti_cheat.finding(
            "output-aliases-input",
            f"output {k} shares memory with input {j} (the reference's does not): the result was written "
            "into the input",
            0,
        ))
    return found


def changed_inputs(before: list[Any], after: list[Any]) -> list[int]:
    """Positions of the tensor inputs that differ between two lists of the same inputs (bitwise, NaN = NaN)."""
    import torch

    return [j for j, (b, a) in enumerate(zip(before, after, strict=False))
            if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor) and differing(b, a)]


def differing(a: Any, b: Any) -> int:
    """How many elements of two same-shaped tensors differ (on their device; NaN equals NaN)."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return max(a.numel(), 1)
    if torch.equal(a, b):
        return 0
    same = a == b
    if a.is_floating_point() or a.is_complex():
        same |= torch.isnan(a) & torch.isnan(b)
    return int((~same).sum())


def aliasing(outputs: list[Any], inputs: list[Any]) -> set[tuple[int, int]]:
    """(output, input) position pairs whose storages overlap: the output is the input or a view of it."""
    import torch

    return {
        (k, j)
        for k, o in enumerate(outputs) if isinstance(o, torch.Tensor)
        for j, x in enumerate(inputs) if isinstance(x, torch.Tensor) and _overlap(o, x)
    }


def _overlap(a: Any, b: Any) -> bool:
    if a.device != b.device:
        return False
    sa, sb = a.untyped_storage(), b.untyped_storage()
    pa, pb, na, nb = sa.data_ptr(), sb.data_ptr(), sa.nbytes(), sb.nbytes()
    return bool(na and nb) and pa < pb + nb and pb < pa + na


def place(model: Any, device: Any, dtype: Any) -> Any:
    if hasattr(model, "to") and hasattr(model, "parameters"):
        model = model.to(device)
        if dtype is not None:
            model = model.to(dtype)
        if hasattr(model, "eval"):
            model.eval()
    return model


def _same(a: list[Any], b: list[Any]) -> bool:
    import torch

    return len(a) == len(b) and all(
        isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape and torch.equal(x, y)
        for x, y in zip(a, b, strict=False)
    )


def _compare_all(expected: list[Any], actual: list[Any], atol: float | None, rtol: float | None) -> list[Any]:
    checks = [compare(i, e, a, atol, rtol) for i, (e, a) in enumerate(zip(expected, actual, strict=False))]
    if len(actual) != len(expected):
        checks.append(results.OutputCheck(
            min(len(actual), len(expected)), False, "missing",
            f"the candidate returned {len(actual)} outputs, the reference {len(expected)}",
        ))
    return checks


def seeded_draws(get_inputs: Any, device: Any, seed: int) -> Any:
    """k → `get_inputs()` on the device under the seed `seed + k`. The host's and the device's generators are
    seeded directly: `torch.manual_seed` seeds every device type and costs ~100 µs, which a timing that draws
    for each of up to a thousand calls of a small kernel would pay a thousand times."""
    import torch

    generators = [torch.default_generator]
    if getattr(device, "type", "cpu") == "cuda":
        generators.append(torch.cuda.default_generators[device.index if device.index is not None
                                                        else torch.cuda.current_device()])

    def draw(k: int) -> list[Any]:
        for generator in generators:
            generator.manual_seed(seed + k)
        return make_inputs(get_inputs, device)

    return draw


class FreshInputs:
    """The inputs of timed call k: `get_inputs()` under a seed of its own, on the device — a new draw for every
    call. `again(k)` gives call k's inputs once more, for the reference of a checked call: drawn again where
    `get_inputs()` gives the same inputs under the same seed (found out once, up front), else a copy kept from
    before the call (every call then keeps one, so that no call looks different from a checked one)."""

    def __init__(self, get_inputs: Any, device: Any, seed: int) -> None:
        self.device = device
        self._draw = seeded_draws(get_inputs, device, seed)
        self.reproducible = _same_values(self._draw(0), self._draw(0))
        self._kept: tuple[int, list[Any]] | None = None

    def __call__(self, k: int) -> list[Any]:
        args = self._draw(k)
        if not self.reproducible:
            self._kept = None  # the last call's copy goes before this one's is made
            self._kept = (k, _clone(args))
        return args

    def again(self, k: int) -> list[Any]:
        if self.reproducible:
            return self._draw(k)
        assert self._kept is not None and self._kept[0] == k, "again() is for the call just made"
        return _clone(self._kept[1])


class TimedCheck:
    """After a chosen timed call of the candidate (harness_timing.Calls): the reference on the same inputs, its
    outputs against the call's, and the call's inputs against the reference's after it. A difference raises
    `TimedCallWrong`: the candidate passed its trials and then did something else while it was timed."""

    def __init__(self, reference: Any, inputs: FreshInputs, atol: float | None, rtol: float | None) -> None:
        self.reference, self.inputs, self.atol, self.rtol = reference, inputs, atol, rtol

    def __call__(self, k: int, args: list[Any], out: Any) -> None:
        actual = flatten(out)
        _sync(self.inputs.device)
        fresh = self.inputs.again(k)
        expected = flatten(self.reference(*fresh))
        _sync(self.inputs.device)
        bad = next((c for c in _compare_all(expected, actual, self.atol, self.rtol) if not c.passed), None)
        if bad is not None:
            raise TimedCallWrong("timed-output-wrong", (
                f"timed call {k + 1} returned a wrong result ({bad.message}) after the trials passed: the candidate "
                "changed behaviour between the correctness trials and the timing"
            ))
        for j in changed_inputs(fresh, args):
            if not compare(j, fresh[j], args[j], self.atol, self.rtol).passed:
                raise TimedCallWrong("inputs-modified", (
                    f"timed call {k + 1} left input {j} otherwise than the reference does on the same inputs: the "
                    "candidate writes into its input while it is timed"
                ))


def _same_values(a: list[Any], b: list[Any]) -> bool:
    import torch

    def same(x: Any, y: Any) -> bool:
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            return isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and torch.equal(x, y)
        try:
            return bool(x == y)
        except (TypeError, ValueError, RuntimeError):  # an array's == has no single truth value
            return False

    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
