"""Peak figures of the GPUs the Judge reasons about (roofline ridge point, occupancy limits).

The profiler owns querying the real device; these are the datasheet numbers the Judge needs offline, and what
it falls back to when a verdict is predicted without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass


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


KNOWN_GPUS: dict[str, GpuSpecs] = {
    g.name: g
    for g in (
        GpuSpecs("H200", "sm_90", 132, 67.0, 989.0, 4800.0, 50 * 1024 * 1024),
        GpuSpecs("H100", "sm_90", 132, 67.0, 989.0, 3350.0, 50 * 1024 * 1024),
        GpuSpecs("A100", "sm_80", 108, 19.5, 312.0, 2039.0, 40 * 1024 * 1024, 164 * 1024),
        GpuSpecs(
            "L40S", "sm_89", 142, 91.6, 362.0, 864.0, 96 * 1024 * 1024, 100 * 1024, max_threads_per_sm=1536
        ),
        GpuSpecs(
            "RTX 4090",
            "sm_89",
            128,
            82.6,
            165.0,
            1008.0,
            72 * 1024 * 1024,
            100 * 1024,
            max_threads_per_sm=1536,
        ),
    )
}

DEFAULT_GPU = KNOWN_GPUS["H200"]


def gpu_by_name(device_name: str | None) -> GpuSpecs:
    """The specs whose name appears in a device name such as 'NVIDIA H200' (the H200's when none matches)."""
    if device_name:
        upper = device_name.upper()
        for name in sorted(KNOWN_GPUS, key=len, reverse=True):
            if name.upper() in upper:
                return KNOWN_GPUS[name]
    return DEFAULT_GPU
