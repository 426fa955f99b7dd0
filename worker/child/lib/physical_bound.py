"""The least time any correct kernel needs for a problem on this GPU: a timing below it is impossible — the work was
not done while it was timed, or the clock was fooled — and fails the test (CL906). KernelBench only flags speedups
above 10×, CudaForge and the other loops nothing; a 6.4 GB element-wise problem "ran" in microseconds here before.

Least bytes: every input tensor read once from DRAM (the timing flushes the L2 before each call) and every output
written once, less what the L2 can hold (writes that fit may still sit there when the call ends). Storage shared
by two tensors counts once. Least FLOPs: what torch's FlopCounterMode counts when the reference runs (matrix
products, convolutions, attention; nothing for the rest).
Peaks: the fastest this part could go — the larger of its datasheet (gpu_parts.py) and what the device reports
(DRAM bandwidth from its memory clock and bus width; the dense tensor-core rate from its SMs, clock and a rate per
architecture, doubled for 8-bit formats where the part has them) — so that no honest kernel is ever refused.
Standard library at top level, torch inside the functions.
"""

from __future__ import annotations

from typing import Any

from .. import gpu_parts, results

# dense fp16/bf16 tensor-core FLOP per clock per SM, by compute capability: the datasheets' rates over SMs × boost
# clock (H100/H200 989.5 TFLOP/s = 132 × 1.83 GHz × 4096; A100 312 = 108 × 1.41 × 2048; V100, T4, A10, L40S 1024)
TENSOR_FLOP_PER_CLOCK = {(7, 0): 1024, (7, 5): 1024, (8, 0): 2048, (8, 6): 1024, (8, 7): 1024, (8, 9): 1024, (9, 0): 4096}
NEWER_FLOP_PER_CLOCK = 16384  # a part newer than the table: generous, a bound must never refuse an honest kernel


def _storages(values: list[Any]) -> dict[tuple[int, Any], int]:
    """Each distinct storage among the tensors of `values`: (pointer, device) → bytes."""
    import torch

    found: dict[tuple[int, Any], int] = {}
    for v in values:
        if isinstance(v, torch.Tensor) and v.numel():
            s = v.untyped_storage()
            key = (s.data_ptr(), v.device)
            found[key] = max(found.get(key, 0), v.numel() * v.element_size())
    return found


def least_bytes(inputs: list[Any], outputs: list[Any], l2_bytes: int) -> int:
    """Bytes any correct kernel moves through DRAM: the inputs read once, the outputs written once beyond the L2."""
    read = _storages(inputs)
    written = {k: n for k, n in _storages(outputs).items() if k not in read}  # an output in an input's storage
    return sum(read.values()) + max(0, sum(written.values()) - l2_bytes)


def counted(reference: Any, inputs: list[Any]) -> tuple[float, Any]:
    """(the FLOPs torch counts for one reference call — 0 where it counts none or cannot count —, its output)."""
    try:
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as counter:
            out = reference(*inputs)
        return float(counter.get_total_flops()), out
    except Exception:  # no counter here, or an op it cannot trace: no FLOP bound, the byte bound stands
        return 0.0, reference(*inputs)


def least_flops(reference: Any, inputs: list[Any]) -> float:
    return counted(reference, inputs)[0]


def peaks(props: Any) -> tuple[float, float, str]:
    """(DRAM GB/s, tensor TFLOP/s, where they come from) for a device whose properties (torch's
    `get_device_properties`) are `props`: the larger of the datasheet and what the device reports; 0 where
    neither knows."""
    part = gpu_parts.lookup_part(props.name)
    memory_khz, bus_bits = getattr(props, "memory_clock_rate", 0) or 0, getattr(props, "memory_bus_width", 0) or 0
    reported_gbs = 2 * memory_khz * 1e3 * bus_bits / 8 / 1e9  # double data rate
    cc = (props.major, props.minor)
    per_clock = TENSOR_FLOP_PER_CLOCK.get(cc, NEWER_FLOP_PER_CLOCK if cc > (9, 0) else 1024)
    if cc >= (8, 9):
        per_clock *= 2  # 8-bit tensor formats
    clock_khz = getattr(props, "clock_rate", 0) or 0
    reported_tflops = props.multi_processor_count * clock_khz * 1e3 * per_clock / 1e12
    table_gbs = part.memory_bandwidth_gbs if part else 0.0
    table_tflops = 2 * max(part.fp16_tensor_tflops or 0.0, part.bf16_tensor_tflops or 0.0) if part else 0.0
    source = f"{part.name} datasheet and the device's report" if part else f"{props.name} as the device reports it"
    return max(table_gbs, reported_gbs), max(table_tflops, reported_tflops), source


def bound(inputs: list[Any], outputs: list[Any], flops: float, device: Any) -> Any:
    """The `PhysicalBound` of a problem on `device` (None off CUDA: a CPU has no such bound here)."""
    import torch

    if getattr(device, "type", "cpu") != "cuda":
        return None
    props = torch.cuda.get_device_properties(device)
    gbs, tflops, source = peaks(props)
    l2 = getattr(props, "L2_cache_size", 0) or 0
    return results.PhysicalBound(least_bytes(inputs, outputs, l2), flops, gbs, tflops, source)
