"""The first CUDA device's properties as torch reports them (for cudalens.profiler.gpu_specs)."""

from __future__ import annotations

_FIELDS = (
    "name", "major", "minor", "total_memory", "multi_processor_count", "L2_cache_size",
    "max_threads_per_multi_processor", "regs_per_multiprocessor", "shared_memory_per_block",
    "shared_memory_per_block_optin", "shared_memory_per_multiprocessor", "warp_size",
    "clock_rate", "memory_clock_rate", "memory_bus_width",
)


def run(payload: dict) -> dict:
    try:
        import torch
    except ImportError as exc:
        return {"available": False, "reason": f"torch is not installed for this interpreter ({exc})"}
    if not torch.cuda.is_available():
        return {"available": False, "reason": f"torch {torch.__version__} sees no CUDA device"}
    props = torch.cuda.get_device_properties(int(payload.get("device", 0)))
    found = {f: getattr(props, f) for f in _FIELDS if isinstance(getattr(props, f, None), (int, float, str))}
    if found.get("clock_rate"):
        found["clock_mhz"] = int(found["clock_rate"]) // 1000  # reported in kHz
    if found.get("memory_clock_rate") and found.get("memory_bus_width"):
        # double data rate: two transfers per clock, bus width in bits
        found["memory_bandwidth_gbs"] = 2 * found["memory_clock_rate"] * 1e3 * found["memory_bus_width"] / 8 / 1e9
    return {"available": True, "properties": found, "device_count": torch.cuda.device_count()}
