"""The structural feature vector of a kernel, from the model and its findings: what the Judge predicts a
verdict from when no GPU is there (the features CUDAPerf found predictive of speed: coalescing, arithmetic
intensity, occupancy inputs, divergence, atomics, barriers, threads per block, global accesses, operations)."""

from __future__ import annotations

from cudalens.analysis.findings import Finding
from cudalens.analysis.model import KernelModel


def kernel_features(model: KernelModel, findings: list[Finding]) -> tuple[tuple[str, float], ...]:
    run = model.primary
    global_sites = {(a.node.start_byte, a.node.end_byte) for a in run.accesses if a.space == "global"}
    shared_sites = {(a.node.start_byte, a.node.end_byte) for a in run.accesses if a.space == "shared"}
    atomic_sites = {(a.node.start_byte, a.node.end_byte) for a in run.accesses if a.atomic}
    codes = [f.code for f in findings]
    uncoalesced = sum(c in ("CL101", "CL102") for c in codes)
    bytes_per_thread = sum(a.size * float(a.mask.sum()) / len(a.mask) for a in run.accesses if a.space == "global")
    block = model.configs[0].block
    n_way = max((dict(f.evidence).get("n_way", 1) for f in findings if f.code == "CL301"), default=1)
    return (
        ("threads_per_block", float(block[0] * block[1] * block[2])),
        ("global_access_sites", float(len(global_sites))),
        ("uncoalesced_fraction", uncoalesced / len(global_sites) if global_sites else 0.0),
        ("gather_sites", float(codes.count("CL104"))),
        ("shared_access_sites", float(len(shared_sites))),
        ("bank_conflict_sites", float(codes.count("CL301"))),
        ("max_bank_conflict_ways", float(n_way)),
        ("divergent_branches", float(codes.count("CL201") + codes.count("CL202"))),
        ("barriers", float(len({(b.node.start_byte, b.node.end_byte) for b in run.barriers}))),
        ("atomic_sites", float(len(atomic_sites))),
        ("float_ops_per_thread", run.float_ops),
        ("global_bytes_per_thread", bytes_per_thread),
        ("arithmetic_intensity", run.float_ops / bytes_per_thread if bytes_per_thread else 0.0),
        ("static_shared_bytes", float(sum(p.elem.size * _prod(p.dims) for p in run.shared_arrays.values()))),
        ("block_shape_known", 0.0 if model.block_assumed() else 1.0),
    )


def _prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out
