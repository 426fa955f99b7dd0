"""GPU facts: the table of known parts everywhere, the real device where there is one."""

from __future__ import annotations

import pytest

from cudalens.profiler.gpu_specs import (
    GpuFacts,
    NoGpu,
    detect_gpu,
    detect_gpu_in_worker,
    facts_for_part,
    lookup_part,
)
from cudalens.worker.pool import WorkerPool


@pytest.mark.parametrize(
    ("name", "arch", "sms"),
    [
        ("NVIDIA H200", "sm_90", 132),
        ("NVIDIA H100 80GB HBM3", "sm_90", 132),
        ("NVIDIA H100 PCIe", "sm_90", 114),
        ("NVIDIA A100-SXM4-80GB", "sm_80", 108),
        ("NVIDIA A100-PCIE-40GB", "sm_80", 108),
        ("NVIDIA L40S", "sm_89", 142),
        ("NVIDIA L4", "sm_89", 58),
        ("NVIDIA GeForce RTX 4090", "sm_89", 128),
        ("NVIDIA A10", "sm_86", 72),
        ("Tesla T4", "sm_75", 40),
        ("Tesla V100-SXM2-32GB", "sm_70", 80),
    ],
)
def test_known_parts(name, arch, sms):
    facts = facts_for_part(name)
    assert isinstance(facts, GpuFacts)
    assert (facts.arch, facts.sm_count, facts.source) == (arch, sms, "table")
    assert facts.memory_bandwidth_gbs and facts.fp32_tflops and facts.registers_per_sm == 65536


def test_a100_80_is_not_the_40():
    assert lookup_part("NVIDIA A100-SXM4-80GB").memory_bandwidth_gbs > lookup_part("NVIDIA A100-SXM4-40GB").memory_bandwidth_gbs


def test_unknown_part_says_so():
    result = facts_for_part("Voodoo 2")
    assert isinstance(result, NoGpu) and "unknown GPU" in result.reason


def test_detection_answers_facts_or_a_reason():
    found = detect_gpu()
    assert isinstance(found, (GpuFacts, NoGpu))
    if isinstance(found, NoGpu):
        assert found.reason


@pytest.mark.gpu
def test_real_device_facts_from_nvidia_smi_and_torch():
    smi = detect_gpu()
    assert isinstance(smi, GpuFacts), smi
    assert smi.compute_capability >= (7, 0) and smi.memory_bytes and smi.name
    pool = WorkerPool()
    try:
        torch_view = detect_gpu_in_worker(pool)
    finally:
        pool.close()
    assert isinstance(torch_view, GpuFacts), torch_view
    assert torch_view.sm_count and torch_view.sm_count >= 10
    assert torch_view.l2_bytes and torch_view.shared_per_block_optin_bytes >= 48 * 1024
    assert torch_view.compute_capability == smi.compute_capability
    assert torch_view.memory_bandwidth_gbs and torch_view.memory_bandwidth_gbs > 100
    print("GPU facts:", torch_view.to_json())


@pytest.mark.gpu
def test_auto_arch_is_the_devices():
    from cudalens.profiler.compile import resolve_arch

    facts = detect_gpu()
    assert isinstance(facts, GpuFacts)
    assert resolve_arch("auto") == resolve_arch("native") == facts.arch
