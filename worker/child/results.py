"""Typed results of the run-time checks: correctness trials, timings, ncu profiles, sanitizer reports.

Standard library only: the worker's job modules load this file by path in an interpreter that may lack
cudalens, and the parent imports it as `cudalens.worker.child.results`. Only JSON crosses between the two,
so every result has `to_json()` and a `from_json()` that accepts what `to_json()` wrote.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

# A timing's spread (interquartile range over median) above this share earns a warning: the Judge reads it.
SPREAD_WARNING = 0.10
# Timing repeats until the median's 95 % confidence interval is within ±2 % of it (or a cap comes first).
INTERVAL_TARGET = 0.02

TestStatus = Literal["passed", "failed", "error", "crashed", "reference-error", "skipped"]


def _from_dict(cls: type, data: dict[str, Any]) -> Any:
    """A flat dataclass from its `asdict` form; unknown keys are dropped so older readers survive new fields."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Mismatch:
    """The first element where the candidate differs from the reference (row-major order)."""

    index: tuple[int, ...]
    expected: float | None  # None: not representable as a float (complex, bool...)
    actual: float | None


@dataclass(frozen=True)
class OutputCheck:
    """One output tensor of one trial compared with the reference's."""

    output: int  # position in the flattened outputs
    passed: bool
    reason: str | None = None  # "shape", "dtype", "nan", "inf", "values", "missing", "aliases-input"
    message: str = ""
    shape: tuple[int, ...] = ()
    expected_shape: tuple[int, ...] = ()
    dtype: str = ""
    expected_dtype: str = ""
    numel: int = 0
    mismatches: int = 0
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    first_mismatch: Mismatch | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["max_abs_error"] = _finite_or_str(self.max_abs_error)
        data["max_rel_error"] = _finite_or_str(self.max_rel_error)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OutputCheck:
        data = dict(data)
        mismatch = data.pop("first_mismatch", None)
        data["max_abs_error"] = _float_from(data.get("max_abs_error", 0.0))
        data["max_rel_error"] = _float_from(data.get("max_rel_error", 0.0))
        check = _from_dict(cls, data)
        if mismatch is not None:
            m = Mismatch(tuple(mismatch["index"]), mismatch.get("expected"), mismatch.get("actual"))
            check = OutputCheck(**{**asdict(check), "first_mismatch": m})
        return check


@dataclass(frozen=True)
class CallLimit:
    """How long one candidate call may run before its worker is killed: `factor` times the reference's measured
    call (synchronized), never less than `floor_s`. The build is outside it (the job's own timeout covers that)."""

    reference_s: float
    factor: float
    floor_s: float

    @property
    def limit_s(self) -> float:
        return max(self.floor_s, self.factor * self.reference_s)

    def describe(self) -> str:
        return (f"{self.limit_s:.3g} s ({self.factor:g}× the reference's {self.reference_s:.3g} s, "
                f"floor {self.floor_s:g} s)")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "limit_s": self.limit_s}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CallLimit:
        return _from_dict(cls, data)


@dataclass(frozen=True)
class CheatFinding:
    """Something a candidate does to fool the test or the timer (worker/child/anti_cheat.py finds the static ones,
    the test job the run-time ones: inputs changed, outputs aliasing inputs, clocks replaced)."""

    check: str  # kebab-case name of the check ("torch-fallback", "inputs-modified", ...)
    message: str
    line: int  # 1-based line in the candidate's file (0: the whole file, or not known)
    severity: Literal["reject", "warn"] = "reject"
    code: str = ""  # the rule code of the check (analysis/codes.py), e.g. "CL907"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheatFinding:
        return _from_dict(cls, data)


@dataclass(frozen=True)
class TrialResult:
    trial: int
    seed: int  # torch.manual_seed before get_inputs(): the trial can be replayed
    passed: bool
    outputs: tuple[OutputCheck, ...] = ()
    error: str | None = None  # the candidate raised: its one-line message
    # run-time anti-cheat findings of this trial: an input changed by the candidate, an output aliasing one
    cheats: tuple[CheatFinding, ...] = ()
    recorded: bool = False  # the inputs were recorded from the model (the problem's get_recorded_inputs), not drawn

    @property
    def inputs_text(self) -> str:
        """How the trial's inputs came: `seed 42`, or `the inputs recorded from the model`."""
        return "the inputs recorded from the model" if self.recorded else f"seed {self.seed}"

    @property
    def first_failure(self) -> OutputCheck | None:
        return next((o for o in self.outputs if not o.passed), None)

    @property
    def failure_message(self) -> str:
        """What went wrong on this trial, in one line ("" when it passed)."""
        if self.error:
            return self.error
        bad = self.first_failure
        if bad is not None:
            return bad.message
        return next((c.message for c in self.cheats if c.severity == "reject"), "")

    def to_json(self) -> dict[str, Any]:
        return {
            "trial": self.trial,
            "seed": self.seed,
            "passed": self.passed,
            "outputs": [o.to_json() for o in self.outputs],
            "error": self.error,
            "cheats": [c.to_json() for c in self.cheats],
            "recorded": self.recorded,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrialResult:
        return cls(
            trial=data["trial"],
            seed=data["seed"],
            passed=data["passed"],
            outputs=tuple(OutputCheck.from_json(o) for o in data.get("outputs", ())),
            error=data.get("error"),
            recorded=bool(data.get("recorded", False)),
            cheats=tuple(CheatFinding.from_json(c) for c in data.get("cheats", ())),
        )


@dataclass(frozen=True)
class TestResult:
    """The verdict of a correctness test: every trial, the tolerances used, and what made the test weak."""

    __test__ = False  # not a pytest test class

    status: TestStatus
    trials: tuple[TrialResult, ...] = ()
    dtype: str = ""
    atol: float = 0.0
    rtol: float = 0.0
    device: str = ""
    # Reasons the reference cannot tell right from wrong (all-zero, constant, equal to an input...).
    degenerate: tuple[str, ...] = ()
    message: str = ""
    traceback: str | None = None
    # What the anti-cheat checks found (static and run-time); a `reject` one fails a test whose trials passed.
    cheats: tuple[CheatFinding, ...] = ()
    # The time limit each candidate call ran under, derived from the reference's measured time (harness_limits).
    limits: CallLimit | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def first_failed_trial(self) -> TrialResult | None:
        return next((t for t in self.trials if not t.passed), None)

    def summary(self) -> str:
        if self.status == "passed":
            n = len(self.trials)
            text = f"{n}/{n} trials passed (atol={self.atol:g}, rtol={self.rtol:g}, {self.dtype})"
            return text + ("; weak test: " + "; ".join(self.degenerate) if self.degenerate else "")
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "trials": [t.to_json() for t in self.trials],
            "dtype": self.dtype,
            "atol": self.atol,
            "rtol": self.rtol,
            "device": self.device,
            "degenerate": list(self.degenerate),
            "message": self.message,
            "traceback": self.traceback,
            "cheats": [c.to_json() for c in self.cheats],
            "limits": None if self.limits is None else self.limits.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TestResult:
        return cls(
            status=data["status"],
            trials=tuple(TrialResult.from_json(t) for t in data.get("trials", ())),
            dtype=data.get("dtype", ""),
            atol=data.get("atol", 0.0),
            rtol=data.get("rtol", 0.0),
            device=data.get("device", ""),
            degenerate=tuple(data.get("degenerate", ())),
            message=data.get("message", ""),
            traceback=data.get("traceback"),
            cheats=tuple(CheatFinding.from_json(c) for c in data.get("cheats", ())),
            limits=None if not data.get("limits") else CallLimit.from_json(data["limits"]),
        )


def median_interval(samples: tuple[float, ...] | list[float], z: float = 1.96) -> tuple[float, float]:
    """A distribution-free 95 % confidence interval of the median: the order statistics at ranks
    n/2 ∓ z·√n/2 (Conover, *Practical Nonparametric Statistics*, the sign test's interval). With 6 samples
    or fewer it is the whole range."""
    x = sorted(samples)
    n = len(x)
    if not n:
        return (math.nan, math.nan)
    half = z * math.sqrt(n) / 2
    lo, hi = math.floor(n / 2 - half), math.ceil(n / 2 + half) - 1  # 0-based ranks
    return (x[max(lo, 0)], x[min(hi, n - 1)])


@dataclass(frozen=True)
class Measurement:
    """A timing: raw samples in milliseconds and the statistics the Judge reads. Never a bare float.

    `samples_ms` are whole calls between CUDA events (`call_ms`, their median); `kernel_ms` is the device time
    of the CUDA kernels (and copies, memsets) one call launched, from torch.profiler, measured apart from the
    timed repetitions: the difference is the call's overhead (allocations, host work the GPU waited for)."""

    label: str
    samples_ms: tuple[float, ...]
    method: Literal["cuda-events", "perf-counter"] = "cuda-events"
    l2_flushed: bool = True
    warnings: tuple[str, ...] = ()
    kernel_ms: float | None = None
    kernels: tuple[tuple[str, float], ...] = ()  # (kernel name, device ms in one call), the longest first

    @classmethod
    def from_samples(
        cls, label: str, samples_ms: list[float] | tuple[float, ...], method: str = "cuda-events",
        l2_flushed: bool = True, warnings: tuple[str, ...] = (),
    ) -> Measurement:
        m = cls(label, tuple(float(s) for s in samples_ms), method, l2_flushed)  # type: ignore[arg-type]
        return cls(label, m.samples_ms, m.method, l2_flushed, tuple(warnings) + m._computed_warnings())

    @property
    def median(self) -> float:
        return statistics.median(self.samples_ms) if self.samples_ms else math.nan

    @property
    def call_ms(self) -> float:
        return self.median

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples_ms) if self.samples_ms else math.nan

    @property
    def min(self) -> float:
        return min(self.samples_ms) if self.samples_ms else math.nan

    @property
    def iqr(self) -> float:
        if len(self.samples_ms) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples_ms, n=4, method="inclusive")
        return q3 - q1

    @property
    def spread(self) -> float:
        """Interquartile range as a share of the median."""
        median = self.median
        return self.iqr / median if median and not math.isnan(median) else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """The median's 95 % confidence interval (ms)."""
        return median_interval(self.samples_ms)

    @property
    def relative_halfwidth(self) -> float:
        """Half the interval's width as a share of the median (0.02: the median is known to ±2 %)."""
        lo, hi = self.interval
        return (hi - lo) / 2 / self.median if self.median else math.nan

    def _computed_warnings(self) -> tuple[str, ...]:
        out = []
        if len(self.samples_ms) < 5:
            out.append(f"only {len(self.samples_ms)} samples: the median is not reliable")
        if self.samples_ms and self.spread > SPREAD_WARNING:
            out.append(
                f"spread {self.spread:.0%} of the median (IQR {self.iqr:.4g} ms over median "
                f"{self.median:.4g} ms): noisy timing, another process may share the GPU"
            )
        if self.samples_ms and self.relative_halfwidth > INTERVAL_TARGET:
            lo, hi = self.interval
            out.append(
                f"the median's 95% interval is ±{self.relative_halfwidth:.1%} ({lo:.4g}–{hi:.4g} ms) after "
                f"{len(self.samples_ms)} samples, wider than ±{INTERVAL_TARGET:.0%}: the repetition cap came first"
            )
        return tuple(out)

    def describe(self) -> str:
        lo, hi = self.interval
        kernel = f", kernels {self.kernel_ms:.4g} ms" if self.kernel_ms is not None else ""
        return (f"{self.label}: median {self.median:.4g} ms [{lo:.4g}–{hi:.4g}] (IQR {self.iqr:.2g} ms, min "
                f"{self.min:.4g} ms, n={len(self.samples_ms)}{kernel})")

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {
            "label": self.label,
            "samples_ms": list(self.samples_ms),
            "method": self.method,
            "l2_flushed": self.l2_flushed,
            "warnings": list(self.warnings),
            "median_ms": self.median,
            "call_ms": self.median,
            "ci_low_ms": lo,
            "ci_high_ms": hi,
            "iqr_ms": self.iqr,
            "min_ms": self.min,
            "mean_ms": self.mean,
            "kernel_ms": self.kernel_ms,
            "kernels": [list(k) for k in self.kernels],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Measurement:
        return cls(
            data["label"], tuple(data["samples_ms"]), data.get("method", "cuda-events"),
            data.get("l2_flushed", True), tuple(data.get("warnings", ())), data.get("kernel_ms"),
            tuple((str(name), float(ms)) for name, ms in data.get("kernels", ())),
        )


@dataclass(frozen=True)
class PhysicalBound:
    """The least time any correct kernel needs for the problem on this GPU (lib/physical_bound.py): the bytes it
    must move through DRAM and the FLOPs it must do, at the part's fastest. A timing below it is impossible."""

    bytes: int
    flops: float
    dram_gbs: float
    tensor_tflops: float
    source: str = ""  # where the peaks come from

    @property
    def bytes_ms(self) -> float:
        return self.bytes / (self.dram_gbs * 1e9) * 1e3 if self.dram_gbs else 0.0

    @property
    def flops_ms(self) -> float:
        return self.flops / (self.tensor_tflops * 1e12) * 1e3 if self.tensor_tflops else 0.0

    @property
    def ms(self) -> float:
        return max(self.bytes_ms, self.flops_ms)

    def describe(self) -> str:
        parts = [f"{self.bytes / 1e9:.4g} GB through DRAM at ≤ {self.dram_gbs:.4g} GB/s = {self.bytes_ms:.4g} ms"]
        if self.flops:
            parts.append(f"{self.flops / 1e9:.4g} GFLOP at ≤ {self.tensor_tflops:.4g} TFLOP/s = {self.flops_ms:.4g} ms")
        return "; ".join(parts) + (f" ({self.source})" if self.source else "")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ms": self.ms}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PhysicalBound:
        return _from_dict(cls, data)


@dataclass(frozen=True)
class Attribution:
    """Whose kernels carried a call's device time (lib/attribution.py): the file's own, or others (library
    kernels, copies, memsets), by name, the longest first."""

    own_ms: float
    others: tuple[tuple[str, float], ...] = ()

    @property
    def total_ms(self) -> float:
        return self.own_ms + sum(ms for _, ms in self.others)

    @property
    def own_share(self) -> float:
        return self.own_ms / self.total_ms if self.total_ms else math.nan

    def to_json(self) -> dict[str, Any]:
        return {"own_ms": self.own_ms, "others": [list(k) for k in self.others], "own_share": self.own_share}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Attribution:
        return cls(float(data["own_ms"]), tuple((str(n), float(ms)) for n, ms in data.get("others", ())))


Baseline = Literal["eager", "compile"]
BASELINES: tuple[Baseline, ...] = ("eager", "compile")
BASELINE_NAMES = {"eager": "eager PyTorch", "compile": "torch.compile"}


@dataclass(frozen=True)
class TimingResult:
    """The candidate against the eager PyTorch reference (and `torch.compile` of it when asked), same inputs.
    `baseline`: which of the two the speedup, and every verdict read from it, is against ("compile": the
    compiled reference, which is then always timed)."""

    candidate: Measurement
    reference: Measurement
    compiled_reference: Measurement | None = None
    bound: PhysicalBound | None = None  # the least time any correct kernel needs here (None: not known)
    attribution: Attribution | None = None  # whose kernels carried the candidate's device time (None: not known)
    checked_calls: int = 0  # timed calls of the candidate whose outputs were compared with the reference's
    baseline: Baseline = "eager"

    @property
    def baseline_timing(self) -> Measurement:
        """The reference the speedup is against."""
        if self.baseline == "compile":
            if self.compiled_reference is None:
                raise ValueError("a torch.compile baseline needs the compiled reference timed")
            return self.compiled_reference
        return self.reference

    @property
    def baseline_name(self) -> str:
        return BASELINE_NAMES[self.baseline]

    @property
    def speedup(self) -> float:
        """Baseline median over candidate median: above 1, the candidate is faster."""
        return self.baseline_timing.median / self.candidate.median if self.candidate.median else math.nan

    @property
    def speedup_interval(self) -> tuple[float, float]:
        """Where the speedup lies when both medians lie in their 95 % intervals (so at least 90 %, as the two
        are measured independently; conservative)."""
        (r_lo, r_hi), (c_lo, c_hi) = self.baseline_timing.interval, self.candidate.interval
        return (r_lo / c_hi if c_hi else math.nan, r_hi / c_lo if c_lo else math.nan)

    def describe_speedup(self) -> str:
        """`1.62× [1.58–1.66]`: the speedup with its interval, to the digits the interval allows."""
        lo, hi = self.speedup_interval
        return f"{self.speedup:.3g}× [{lo:.3g}–{hi:.3g}]"

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.speedup_interval
        return {
            "candidate": self.candidate.to_json(),
            "reference": self.reference.to_json(),
            "compiled_reference": None if self.compiled_reference is None else self.compiled_reference.to_json(),
            "bound": None if self.bound is None else self.bound.to_json(),
            "attribution": None if self.attribution is None else self.attribution.to_json(),
            "checked_calls": self.checked_calls,
            "baseline": self.baseline,
            "speedup": self.speedup,
            "speedup_low": lo,
            "speedup_high": hi,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TimingResult:
        compiled, bound, attribution = data.get("compiled_reference"), data.get("bound"), data.get("attribution")
        return cls(
            Measurement.from_json(data["candidate"]),
            Measurement.from_json(data["reference"]),
            None if compiled is None else Measurement.from_json(compiled),
            None if bound is None else PhysicalBound.from_json(bound),
            None if attribution is None else Attribution.from_json(attribution),
            int(data.get("checked_calls", 0)),
            "compile" if data.get("baseline") == "compile" else "eager",
        )


@dataclass(frozen=True)
class KernelMetrics:
    """One profiled launch of one kernel: ncu metric name → value (numbers; strings kept as text)."""

    name: str  # demangled, with parameters as ncu prints it
    launch: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)  # non-numeric metrics (names, cache config...)

    def get(self, metric: str) -> float | None:
        return self.metrics.get(metric)

    @property
    def base_name(self) -> str:
        """The function name without parameters, template arguments or namespaces."""
        return base_kernel_name(self.name)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KernelMetrics:
        return cls(data["name"], data.get("launch", 0), dict(data.get("metrics", {})), dict(data.get("text", {})))


@dataclass(frozen=True)
class LineCounters:
    """Source counters of one CUDA source line (summed over its SASS instructions and the profiled launches)."""

    file: str
    line: int
    kernel: str = ""
    source: str = ""
    inst_executed: float = 0.0
    thread_inst_executed: float = 0.0  # predicated-on threads, when ncu reports them
    global_requests: float = 0.0  # L1 tag requests for global memory
    global_sectors: float = 0.0  # L2 theoretical sectors
    global_sectors_ideal: float = 0.0
    shared_wavefronts: float = 0.0
    shared_wavefronts_ideal: float = 0.0
    divergent_branches: float = 0.0
    stall_samples: float = 0.0

    @property
    def excess_sectors(self) -> float:
        return max(self.global_sectors - self.global_sectors_ideal, 0.0)

    @property
    def excess_sector_share(self) -> float:
        return self.excess_sectors / self.global_sectors if self.global_sectors else 0.0

    @property
    def sectors_per_request(self) -> float:
        return self.global_sectors / self.global_requests if self.global_requests else 0.0

    @property
    def ideal_sectors_per_request(self) -> float:
        return self.global_sectors_ideal / self.global_requests if self.global_requests else 0.0

    @property
    def bank_conflict_wavefronts(self) -> float:
        return max(self.shared_wavefronts - self.shared_wavefronts_ideal, 0.0)

    @property
    def bank_conflict_share(self) -> float:
        return self.bank_conflict_wavefronts / self.shared_wavefronts if self.shared_wavefronts else 0.0

    @property
    def threads_per_instruction(self) -> float:
        """Active (predicated-on) threads per executed warp instruction; 32 means no divergence."""
        return self.thread_inst_executed / self.inst_executed if self.inst_executed else 32.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LineCounters:
        return _from_dict(cls, data)


@dataclass(frozen=True)
class NcuProfile:
    """What Nsight Compute said about the file's kernels."""

    kernels: tuple[KernelMetrics, ...] = ()
    lines: tuple[LineCounters, ...] = ()
    source: Literal["ncu_report", "csv", "cache", "none"] = "none"
    ncu_version: str = ""
    warnings: tuple[str, ...] = ()
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kernels": [k.to_json() for k in self.kernels],
            "lines": [x.to_json() for x in self.lines],
            "source": self.source,
            "ncu_version": self.ncu_version,
            "warnings": list(self.warnings),
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NcuProfile:
        return cls(
            kernels=tuple(KernelMetrics.from_json(k) for k in data.get("kernels", ())),
            lines=tuple(LineCounters.from_json(x) for x in data.get("lines", ())),
            source=data.get("source", "none"),
            ncu_version=data.get("ncu_version", ""),
            warnings=tuple(data.get("warnings", ())),
            error=data.get("error"),
        )


@dataclass(frozen=True)
class SanitizerIssue:
    """One error compute-sanitizer reported, with where it happened when it said so."""

    tool: Literal["memcheck", "racecheck", "synccheck", "initcheck"]
    kind: str  # "invalid-global-write", "race", "barrier", "api-error", ...
    message: str
    file: str | None = None
    line: int | None = None
    kernel: str | None = None
    thread: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    # The other side of a race: (file, line).
    other_file: str | None = None
    other_line: int | None = None
    count: int = 1  # hazards ncu folded into this report

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SanitizerIssue:
        return _from_dict(cls, data)


@dataclass(frozen=True)
class SanitizerResult:
    tool: str
    issues: tuple[SanitizerIssue, ...] = ()
    error_count: int | None = None  # "ERROR SUMMARY: n errors"; None when the summary is missing
    exit_code: int | None = None
    output_tail: str = ""
    error: str | None = None  # the sanitizer could not run (not installed, timeout...)
    # what was run: how the inputs were chosen and their shapes ("scaled batch_size 4096→128 ...; [[128, 96]]")
    inputs: str = ""
    seconds: float = 0.0
    timeout_s: float = 0.0

    def describe(self) -> str:
        """`compute-sanitizer racecheck on scaled N 4096→128 (...), inputs [[128, 128]]: 0 errors in 3.1 s`."""
        what = f"compute-sanitizer {self.tool}" + (f" on {self.inputs}" if self.inputs else "")
        if self.error:
            return f"{what}: {self.error}"
        return f"{what}: {self.error_count if self.error_count is not None else '?'} errors in {self.seconds:.1f} s"

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "issues": [i.to_json() for i in self.issues],
            "error_count": self.error_count,
            "exit_code": self.exit_code,
            "output_tail": self.output_tail,
            "error": self.error,
            "inputs": self.inputs,
            "seconds": self.seconds,
            "timeout_s": self.timeout_s,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SanitizerResult:
        return cls(
            tool=data["tool"],
            issues=tuple(SanitizerIssue.from_json(i) for i in data.get("issues", ())),
            error_count=data.get("error_count"),
            exit_code=data.get("exit_code"),
            output_tail=data.get("output_tail", ""),
            error=data.get("error"),
            inputs=data.get("inputs", ""),
            seconds=data.get("seconds", 0.0),
            timeout_s=data.get("timeout_s", 0.0),
        )


def base_kernel_name(name: str) -> str:
    """`void ns::k<float, 4>(float *, int)` → `k`: the name a `__global__` definition spells."""
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):  # drop the parameter list: the first '(' outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    head = name[:cut].strip()
    depth, out = 0, []
    for ch in head:  # drop template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    head = "".join(out).strip()
    head = head.split()[-1] if head.split() else head  # drop the return type
    return head.rsplit("::", 1)[-1]


def _finite_or_str(x: float) -> float | str:
    return x if math.isfinite(x) else repr(x)  # JSON has no NaN/Inf


def _float_from(x: float | str) -> float:
    return float(x)
