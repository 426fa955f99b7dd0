"""A kernel's place on the roofline, from what Nsight Compute measured and the GPU's datasheet peaks.

The point: FLOPs counted by precision (FP32 and FP16/BF16 thread instructions on the CUDA cores, the tensor path's
operations), DRAM bytes and the launch's duration, so intensity = FLOP / byte and performance = FLOP / s. The
ceilings: each precision's peak from the spec table (profiler/gpu_specs.py) and the DRAM bandwidth. The bound is
the roof that is lower at the kernel's intensity: left of the ridge memory, right of it compute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cudalens.agents.evaluation import ProfileMetrics
from cudalens.agents.gpu_specs import GpuSpecs
from cudalens.profiler.ncu.metrics import (
    DRAM_BYTES,
    DRAM_BYTES_READ,
    DRAM_BYTES_WRITE,
    DURATION,
    FLOP_COUNTERS,
    TENSOR_OPS,
    Precision,
)

PRECISION_LABEL: dict[Precision, str] = {"fp32": "FP32", "fp16": "FP16/BF16", "tensor": "tensor cores"}


@dataclass(frozen=True)
class Ceiling:
    label: str  # "FP32", "FP16/BF16", "tensor FP16/BF16", "tensor TF32", "DRAM"
    value: float  # FLOP/s for compute roofs, bytes/s for the memory roof


@dataclass(frozen=True)
class RooflinePoint:
    kernel: str
    flops: dict[Precision, float]  # measured FLOP per precision
    dram_bytes: float
    seconds: float

    @property
    def total_flops(self) -> float:
        return sum(self.flops.values())

    @property
    def precision(self) -> Precision:
        """The precision that did most of the work (FP32 when nothing was counted)."""
        return max(self.flops, key=lambda p: self.flops[p]) if self.total_flops else "fp32"

    @property
    def intensity(self) -> float | None:
        """FLOP per DRAM byte; None when the launch moved no DRAM bytes (all in cache)."""
        return self.total_flops / self.dram_bytes if self.dram_bytes else None

    @property
    def flops_per_s(self) -> float:
        return self.total_flops / self.seconds

    @property
    def bytes_per_s(self) -> float:
        return self.dram_bytes / self.seconds


@dataclass(frozen=True)
class Roofline:
    point: RooflinePoint
    compute: Ceiling  # the roof of the point's precision
    memory: Ceiling
    ceilings: tuple[Ceiling, ...]  # every compute roof the GPU has, for charts

    @property
    def ridge(self) -> float:
        """FLOP/byte where the point's compute roof meets the memory roof."""
        return self.compute.value / self.memory.value

    @property
    def bound(self) -> Literal["memory", "compute"]:
        ai = self.point.intensity
        return "compute" if ai is None or ai >= self.ridge else "memory"

    @property
    def attainable(self) -> float:
        """FLOP/s the roof allows at the point's intensity."""
        ai = self.point.intensity
        return self.compute.value if ai is None else min(self.compute.value, ai * self.memory.value)

    @property
    def of_roof(self) -> float:
        """Achieved FLOP/s as a share of what the roof allows here (0..1, more when the datasheet is low)."""
        return self.point.flops_per_s / self.attainable if self.attainable else 0.0

    @property
    def of_bandwidth(self) -> float:
        return self.point.bytes_per_s / self.memory.value

    def summary(self) -> str:
        """One line: where the point is and how far below its roof."""
        p = self.point
        ai = "no DRAM traffic" if p.intensity is None else f"{p.intensity:.3g} FLOP/B"
        return (
            f"roofline: {ai}, {self.bound}-bound (ridge {self.ridge:.3g}); {_rate(p.flops_per_s)}FLOP/s "
            f"{PRECISION_LABEL[p.precision]} = {self.of_roof:.0%} of the roof here; DRAM {_rate(p.bytes_per_s)}B/s "
            f"= {self.of_bandwidth:.0%} of {_rate(self.memory.value)}B/s"
        )


def _rate(value: float) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g} "


def point_of(p: ProfileMetrics) -> RooflinePoint | None:
    """The measured point, or None when the profile lacks the duration or every FLOP and byte counter."""
    ns = p.get(DURATION)
    if not ns:
        return None
    flops: dict[Precision, float] = {}
    for name, (precision, per) in FLOP_COUNTERS.items():
        value = p.get(name)
        if value is not None:
            flops[precision] = flops.get(precision, 0.0) + value * per
    dram = p.get(DRAM_BYTES)
    if dram is None and (p.get(DRAM_BYTES_READ) is not None or p.get(DRAM_BYTES_WRITE) is not None):
        dram = (p.get(DRAM_BYTES_READ) or 0.0) + (p.get(DRAM_BYTES_WRITE) or 0.0)
    if not flops and dram is None:
        return None
    return RooflinePoint(p.kernel, flops, dram or 0.0, ns * 1e-9)


def ceilings(gpu: GpuSpecs) -> dict[str, Ceiling]:
    roofs = {
        "fp32": Ceiling("FP32", gpu.peak_fp32_tflops * 1e12),
        "fp16": Ceiling("FP16/BF16", (gpu.peak_fp16_tflops or gpu.peak_fp32_tflops) * 1e12),
        "tensor": Ceiling("tensor FP16/BF16", gpu.peak_tensor_tflops * 1e12),
    }
    if gpu.peak_tf32_tensor_tflops:
        roofs["tf32"] = Ceiling("tensor TF32", gpu.peak_tf32_tensor_tflops * 1e12)
    return roofs


def roofline(p: ProfileMetrics, gpu: GpuSpecs) -> Roofline | None:
    point = point_of(p)
    if point is None:
        return None
    roofs = ceilings(gpu)
    compute = roofs[point.precision]
    if point.precision == "tensor" and "tf32" in roofs:
        tf32 = p.get(TENSOR_OPS["tf32"]) or 0.0
        if tf32 * 2 > point.flops["tensor"]:  # mostly TF32 work: the lower TF32 roof is the one it meets
            compute = roofs["tf32"]
    return Roofline(point, compute, Ceiling("DRAM", gpu.dram_bandwidth_gbs * 1e9), tuple(roofs.values()))
