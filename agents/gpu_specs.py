"""The GPU figures the Judge and the prompts reason with (roofline ridge point, occupancy limits).

A thin view over the profiler's `GpuFacts` (device query plus its table of known parts), reduced to what the
Judge needs and never missing a number: without a GPU, or for a part the table lacks, the H200's figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from cudalens.profiler.gpu_specs import KNOWN_PARTS, GpuFacts, NoGpu, detect_gpu, facts_for_part


@dataclass(frozen=True)
class GpuSpecs:
    name: str
    arch: str  # "sm_90"
    sm_count: int
    peak_fp32_tflops: float
    peak_tensor_tflops: float  # dense fp16/bf16 tensor-core peak
    dram_bandwidth_gbs: float
    l2_bytes: int
    shared_bytes_per_sm: int = 228 * 1024
    registers_per_sm: int = 65536
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    peak_fp16_tflops: float | None = None  # FP16/BF16 on the CUDA cores; None: not in the table
    peak_tf32_tensor_tflops: float | None = None

    @property
    def ridge_point(self) -> float:
        """FLOP per DRAM byte where the fp32 roofline turns from memory- to compute-bound."""
        return self.peak_fp32_tflops * 1e12 / (self.dram_bandwidth_gbs * 1e9)

    def describe(self) -> str:
        return (
            f"{self.name} ({self.arch}, {self.sm_count} SMs): {self.peak_fp32_tflops:g} TFLOP/s fp32, "
            f"{self.peak_tensor_tflops:g} TFLOP/s fp16/bf16 tensor cores, {self.dram_bandwidth_gbs:g} GB/s DRAM, "
            f"{self.l2_bytes // (1024 * 1024)} MiB L2, {self.shared_bytes_per_sm // 1024} KiB shared memory "
            f"and {self.registers_per_sm} registers per SM, ridge point {self.ridge_point:.1f} FLOP/byte"
        )

    @classmethod
    def from_facts(cls, facts: GpuFacts, fallback: GpuSpecs | None = None) -> GpuSpecs:
        base = fallback or DEFAULT_GPU
        return cls(
            name=facts.name,
            arch=facts.arch,
            sm_count=facts.sm_count or base.sm_count,
            peak_fp32_tflops=facts.fp32_tflops or base.peak_fp32_tflops,
            peak_tensor_tflops=facts.fp16_tensor_tflops
            or facts.bf16_tensor_tflops
            or base.peak_tensor_tflops,
            dram_bandwidth_gbs=facts.memory_bandwidth_gbs or base.dram_bandwidth_gbs,
            l2_bytes=facts.l2_bytes or base.l2_bytes,
            shared_bytes_per_sm=facts.shared_per_sm_bytes,
            registers_per_sm=facts.registers_per_sm,
            max_threads_per_sm=facts.max_threads_per_sm,
            max_blocks_per_sm=facts.max_blocks_per_sm,
            peak_fp16_tflops=facts.fp16_tflops,
            peak_tf32_tensor_tflops=facts.tf32_tensor_tflops,
        )


DEFAULT_GPU = GpuSpecs("NVIDIA H200", "sm_90", 132, 67.0, 989.5, 4800.0, 50 * 1024 * 1024,
                       peak_fp16_tflops=133.8, peak_tf32_tensor_tflops=494.7)
KNOWN_GPUS: tuple[str, ...] = tuple(p.name for p in KNOWN_PARTS)


def gpu_by_name(name: str | None) -> GpuSpecs:
    """The table's specs for a part such as 'H100' or 'NVIDIA A100 80GB' (the H200's when unknown)."""
    return named_peaks(name)[0] if name else DEFAULT_GPU


def peaks_of(facts: GpuFacts | NoGpu) -> tuple[GpuSpecs, str]:
    """The GPU whose peaks draw a report's roofs and judge its kernels, and why that one, in words for the page:
    this machine's, or with none here the H200's, which makes every verdict a prediction."""
    if isinstance(facts, NoGpu):
        return DEFAULT_GPU, (f"no GPU on this machine ({facts.reason}): the peaks are the {DEFAULT_GPU.name}'s, so "
                             "the roofs and verdicts are predictions for that GPU")
    return GpuSpecs.from_facts(facts), "this machine's GPU"


def named_peaks(name: str) -> tuple[GpuSpecs, str]:
    """`--gpu NAME`'s specs and why (an unknown name says it fell back to the H200)."""
    facts = facts_for_part(name)
    if facts is None or isinstance(facts, NoGpu):
        return DEFAULT_GPU, f"--gpu {name} is not a GPU cudalens knows: the peaks are the {DEFAULT_GPU.name}'s"
    return GpuSpecs.from_facts(facts), f"named by --gpu {name}"


def detect_gpu_specs() -> GpuSpecs:
    """This machine's first GPU (the H200's figures when there is none: verdicts are then predictions)."""
    return peaks_of(detect_gpu())[0]
