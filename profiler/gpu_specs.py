"""What the GPU can do, for the Judge and the occupancy math: `GpuFacts`, or `NoGpu` with the reason.

Facts come from the device where one is present (`nvidia-smi`, or `torch.cuda.get_device_properties` through the
worker's `gpu_facts` job, which also knows the SM count, L2 size and shared-memory limits) and from a table of
known parts for what no query reports (peak FP32 and tensor-core rates, memory bandwidth). Without a GPU the
answer is one `NoGpu` value whose reason the caller shows once.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from cudalens.profiler import processes
from cudalens.profiler.occupancy import ArchLimits, arch_limits
from cudalens.worker.child.gpu_parts import KNOWN_PARTS, lookup_part
from cudalens.worker.child.protocol import JobRequest

if TYPE_CHECKING:
    from cudalens.worker.pool import WorkerPool

MB = 1024 * 1024


@dataclass(frozen=True)
class GpuFacts:
    name: str
    compute_capability: tuple[int, int]
    sm_count: int | None
    memory_bandwidth_gbs: float | None
    fp32_tflops: float | None
    fp16_tensor_tflops: float | None
    bf16_tensor_tflops: float | None
    tf32_tensor_tflops: float | None
    l2_bytes: int | None
    memory_bytes: int | None
    shared_per_sm_bytes: int
    shared_per_block_bytes: int  # without opting in
    shared_per_block_optin_bytes: int
    registers_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    clock_mhz: int | None
    source: str  # "device", "table", "device+table"
    known_part: str | None = None  # the table entry used, if any
    fp16_tflops: float | None = None

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    def to_json(self) -> dict:
        return {**asdict(self), "arch": self.arch}


@dataclass(frozen=True)
class NoGpu:
    reason: str


def _limits(cc: tuple[int, int]) -> ArchLimits | None:
    try:
        return arch_limits(f"sm_{cc[0]}{cc[1]}")
    except KeyError:
        return None


def facts_from_properties(props: dict) -> GpuFacts:
    """Facts from what a device reported (the keys of `torch.cuda.get_device_properties`, or of nvidia-smi's
    query as `_query_nvidia_smi` names them), completed from the table of known parts."""
    name = str(props.get("name", "unknown GPU"))
    part = lookup_part(name)
    cc = (int(props["major"]), int(props["minor"])) if "major" in props else (part.compute_capability if part else (0, 0))
    limits = _limits(cc)

    def pick(key: str, fallback):
        value = props.get(key)
        return value if value not in (None, 0, "") else fallback

    return GpuFacts(
        name=name,
        compute_capability=cc,
        sm_count=pick("multi_processor_count", part.sm_count if part else None),
        memory_bandwidth_gbs=pick("memory_bandwidth_gbs", part.memory_bandwidth_gbs if part else None),
        fp32_tflops=part.fp32_tflops if part else None,
        fp16_tensor_tflops=part.fp16_tensor_tflops if part else None,
        bf16_tensor_tflops=part.bf16_tensor_tflops if part else None,
        tf32_tensor_tflops=part.tf32_tensor_tflops if part else None,
        l2_bytes=pick("L2_cache_size", part.l2_bytes if part else None),
        memory_bytes=pick("total_memory", int(part.memory_gb * 1e9) if part else None),
        shared_per_sm_bytes=pick("shared_memory_per_multiprocessor", limits.shared_per_sm if limits else 0),
        shared_per_block_bytes=pick("shared_memory_per_block", limits.shared_per_block if limits else 48 * 1024),
        shared_per_block_optin_bytes=pick(
            "shared_memory_per_block_optin", limits.shared_per_block_optin if limits else 48 * 1024
        ),
        registers_per_sm=pick("regs_per_multiprocessor", limits.registers_per_sm if limits else 65536),
        max_threads_per_sm=pick("max_threads_per_multi_processor", limits.max_threads_per_sm if limits else 2048),
        max_blocks_per_sm=limits.max_blocks_per_sm if limits else 32,
        clock_mhz=pick("clock_mhz", part.boost_clock_mhz if part else None),
        source="device+table" if part else "device",
        known_part=part.name if part else None,
        fp16_tflops=part.fp16_tflops if part else None,
    )


def facts_for_part(name: str) -> GpuFacts | NoGpu:
    """The table's facts for a part by name ("H100", "A100 80GB"), e.g. to plan for a GPU that is not here."""
    part = lookup_part(name)
    if part is None:
        return NoGpu(f"unknown GPU {name!r} (known: {', '.join(p.name for p in KNOWN_PARTS)})")
    facts = facts_from_properties({"name": part.name, "major": part.compute_capability[0],
                                   "minor": part.compute_capability[1]})
    return replace(facts, source="table")


_SMI_FIELDS = ("name", "compute_cap", "memory.total", "clocks.max.sm", "driver_version")


def _query_nvidia_smi() -> list[dict] | str:
    """One dict per GPU, or the reason there is none."""
    smi = processes.which("nvidia-smi")
    if smi is None:
        return "no NVIDIA driver here (nvidia-smi is not on PATH)"
    out = processes.run([smi, f"--query-gpu={','.join(_SMI_FIELDS)}", "--format=csv,noheader,nounits"], timeout=30)
    if out.timed_out:
        return "nvidia-smi failed: it did not answer in 30 s"
    if out.returncode != 0:
        return f"nvidia-smi failed: {(out.stderr or out.stdout).strip()[:200]}"
    gpus = []
    for line in out.stdout.strip().splitlines():
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(_SMI_FIELDS):
            continue
        name, cc, memory_mib, clock, driver = values
        major, _, minor = cc.partition(".")
        gpus.append({
            "name": name,
            "major": int(major) if major.isdigit() else 0,
            "minor": int(minor) if minor.isdigit() else 0,
            "total_memory": int(float(memory_mib) * MB) if memory_mib.replace(".", "").isdigit() else None,
            "clock_mhz": int(float(clock)) if clock.replace(".", "").isdigit() else None,
            "driver": driver,
        })
    return gpus or "nvidia-smi lists no GPU"


@functools.lru_cache(maxsize=1)
def detect_gpu() -> GpuFacts | NoGpu:
    """The first GPU's facts from nvidia-smi and the table (cached for the process)."""
    found = _query_nvidia_smi()
    if isinstance(found, str):
        return NoGpu(found)
    return facts_from_properties(found[0])


@functools.lru_cache(maxsize=1)
def gpu_count() -> int:
    """How many GPUs nvidia-smi lists (0 without a driver); `CUDA_VISIBLE_DEVICES` is not applied here."""
    found = _query_nvidia_smi()
    return 0 if isinstance(found, str) else len(found)


def detect_gpu_in_worker(pool: WorkerPool, timeout_s: float = 120.0) -> GpuFacts | NoGpu:
    """The facts as torch sees the device from the worker's interpreter (SM count, L2, shared-memory limits)."""
    result = pool.run(JobRequest(pool.new_id(), "gpu_facts", {}, timeout_s))
    if not result.ok:
        return NoGpu(f"the gpu_facts job failed ({result.status}): {(result.error or '').strip()[-300:]}")
    if not result.payload.get("available"):
        return NoGpu(str(result.payload.get("reason", "torch sees no CUDA device")))
    return facts_from_properties(result.payload["properties"])


def detected_arch() -> str | None:
    """`sm_XY` of the first GPU, or None without one."""
    facts = detect_gpu()
    if isinstance(facts, NoGpu) or facts.compute_capability == (0, 0):
        return None
    return facts.arch
