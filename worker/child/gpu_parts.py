"""Datasheet figures of the GPUs cudalens knows (peak rates and bandwidth, which no device query reports), and the
lookup of a part by its device name. The parent's `cudalens.profiler.gpu_specs` builds on this table; the
child reads it for the physical bound of a timing (lib/physical_bound.py). Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True)
class KnownPart:
    """Datasheet figures (dense tensor-core rates, boost clock)."""

    pattern: str  # regex on the device name, case-insensitive
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    memory_bandwidth_gbs: float
    fp32_tflops: float
    fp16_tensor_tflops: float | None
    bf16_tensor_tflops: float | None
    tf32_tensor_tflops: float | None
    l2_bytes: int
    memory_gb: float
    boost_clock_mhz: int
    fp16_tflops: float | None = None  # FP16/BF16 on the CUDA cores (not tensor cores)


KNOWN_PARTS: tuple[KnownPart, ...] = (
    KnownPart(r"H200", "NVIDIA H200", (9, 0), 132, 4800, 67.0, 989.5, 989.5, 494.7, 50 * MB, 141, 1980, fp16_tflops=133.8),
    KnownPart(r"H100.*PCIe", "NVIDIA H100 PCIe", (9, 0), 114, 2000, 51.2, 756.5, 756.5, 378.0, 50 * MB, 80, 1755, fp16_tflops=102.4),
    KnownPart(r"H100", "NVIDIA H100 SXM", (9, 0), 132, 3350, 66.9, 989.5, 989.5, 494.7, 50 * MB, 80, 1980, fp16_tflops=133.8),
    KnownPart(r"A100.*80", "NVIDIA A100 80GB", (8, 0), 108, 2039, 19.5, 312.0, 312.0, 156.0, 40 * MB, 80, 1410, fp16_tflops=78.0),
    KnownPart(r"A100", "NVIDIA A100 40GB", (8, 0), 108, 1555, 19.5, 312.0, 312.0, 156.0, 40 * MB, 40, 1410, fp16_tflops=78.0),
    KnownPart(r"L40S", "NVIDIA L40S", (8, 9), 142, 864, 91.6, 366.0, 366.0, 183.0, 96 * MB, 48, 2520, fp16_tflops=91.6),
    KnownPart(r"\bL4\b", "NVIDIA L4", (8, 9), 58, 300, 30.3, 121.0, 121.0, 60.0, 48 * MB, 24, 2040, fp16_tflops=30.3),
    KnownPart(r"RTX 4090", "NVIDIA GeForce RTX 4090", (8, 9), 128, 1008, 82.6, 165.2, 165.2, 82.6, 72 * MB, 24, 2520, fp16_tflops=82.6),
    KnownPart(r"\bA10\b", "NVIDIA A10", (8, 6), 72, 600, 31.2, 125.0, 125.0, 62.5, 6 * MB, 24, 1695, fp16_tflops=31.2),
    KnownPart(r"\bT4\b", "Tesla T4", (7, 5), 40, 320, 8.1, 65.0, None, None, 4 * MB, 16, 1590, fp16_tflops=16.2),
    KnownPart(r"V100", "Tesla V100", (7, 0), 80, 900, 15.7, 125.0, None, None, 6 * MB, 32, 1530, fp16_tflops=31.4),
)


def lookup_part(name: str) -> KnownPart | None:
    for part in KNOWN_PARTS:
        if re.search(part.pattern, name, re.IGNORECASE):
            return part
    return None
