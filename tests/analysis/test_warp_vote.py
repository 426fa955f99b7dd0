"""Warp votes and elected leaders in the lane interpreter (analysis/warp_vote.py), one construct a test: the mask
`__activemask()` and `__ballot_sync` give, `__ffs`/`__popc` of it, a lane compared with a leader the data elect
(one lane of each warp, followed as a sample and never as exact), and helpers named like atomics."""

from __future__ import annotations

import numpy as np

from cudalens.analysis.simulate import SimResult, Simulator
from cudalens.analysis.unit import build_unit
from cudalens.analysis.values import DATA, ELECTED, UNIFORM


def run(source: str, block=(64, 1, 1)) -> SimResult:
    unit = build_unit(source.encode())
    [kernel] = unit.kernels
    return Simulator(unit, kernel, block, {}, {}).run()


def store(result: SimResult, base: str = "out"):
    [access] = [a for a in result.accesses if a.base == base and a.write]
    return access


def test_active_mask_under_an_evaluated_branch_is_the_warps_running_lanes() -> None:
    access = store(run("""
__global__ void k(unsigned* out) {
    if (threadIdx.x < 40) out[__popc(__activemask()) + 100 * __ffs(__activemask())] = 0;
}"""))
    # warp 0: all 32 lanes, lowest lane 0; warp 1: lanes 32..39, 8 of them, lowest bit 0 again
    assert np.array_equal(np.unique(access.addr[access.mask] // 4), [108, 132])
    assert access.exact_mask


def test_a_ballot_of_a_known_predicate_is_known_and_one_of_data_is_warp_uniform() -> None:
    result = run("""
__global__ void k(int* out, const float* in) {
    unsigned odd = __ballot_sync(0xffffffff, threadIdx.x & 1);
    out[__ffs(odd) + 100 * __popc(odd)] = 0;
    unsigned votes = __ballot_sync(0xffffffff, in[threadIdx.x] > 0.0f);
    if (votes == 0) out[threadIdx.x] = 1;
}""")
    first, _ = [a for a in result.accesses if a.base == "out"]
    assert np.all(first.addr // 4 == 2 + 1600)
    [branch] = result.branches
    assert branch.cond is None and UNIFORM in branch.deps and not branch.thread_dependent


def test_a_lane_compared_with_a_data_elected_leader_is_one_lane_of_each_warp_and_not_exact() -> None:
    access = store(run("""
__global__ void k(int* out, const float* in) {
    if (in[threadIdx.x] > 0.0f) {
        int leader = __ffs(__activemask()) - 1;
        if ((threadIdx.x & 31) == leader) out[0] = 1;
    }
}"""))
    assert access.mask.reshape(-1, 32).sum(axis=1).tolist() == [1, 1]
    assert not access.exact_mask


def test_the_branch_on_an_elected_lane_records_no_condition() -> None:
    # which lane takes it is the data's: rules reading the branch see an unknown condition, not the sample
    result = run("""
__global__ void k(int* out, const float* in) {
    unsigned votes = __ballot_sync(0xffffffff, in[threadIdx.x] > 0.0f);
    if (threadIdx.x % 32 == __ffs(votes) - 1) out[0] = 1;
}""")
    [branch] = result.branches
    assert branch.cond is None and ELECTED in branch.deps


def test_not_the_leader_and_a_conjunction_with_data() -> None:
    result = run("""
__global__ void k(int* out, int* other, const float* in) {
    bool keep = in[threadIdx.x] > 0.0f;
    unsigned votes = __ballot_sync(0xffffffff, keep);
    int lane = threadIdx.x % 32;
    if (lane != __ffs(votes) - 1) out[0] = 1;
    if (keep && lane == __ffs(votes) - 1) other[0] = 1;
}""")
    assert store(result).mask.reshape(-1, 32).sum(axis=1).tolist() == [31, 31]
    assert store(result, "other").mask.reshape(-1, 32).sum(axis=1).tolist() == [1, 1]


def test_a_value_shared_by_several_lanes_elects_no_one() -> None:
    # `threadIdx.x / 32` is one value per warp: comparing it with a leader picks whole warps, not a lane
    access = store(run("""
__global__ void k(int* out, const float* in) {
    unsigned votes = __ballot_sync(0xffffffff, in[threadIdx.x] > 0.0f);
    if (threadIdx.x / 32 == __ffs(votes)) out[0] = 1;
}"""))
    assert access.mask.all() and not access.exact_mask


def test_a_helper_named_like_an_atomic_is_followed_and_one_without_a_visible_atomic_is_one() -> None:
    result = run("""
__device__ int atomicAggInc(int* counter) {
    unsigned active = __activemask();
    int leader = __ffs(active) - 1;
    int first = 0;
    if ((threadIdx.x & 31) == leader) first = atomicAdd(counter, __popc(active));
    return __shfl_sync(active, first, leader);
}
__device__ int atomicRead(int* p) { return ((cuda::atomic_ref<int>*)p)->load(); }
__global__ void k(int* out, int* ticket, int* flag) {
    out[threadIdx.x] = atomicAggInc(ticket) + atomicRead(flag);
}""")
    [ticket] = [a for a in result.accesses if a.base == "ticket"]
    [flag] = [a for a in result.accesses if a.base == "flag"]
    assert ticket.atomic and ticket.mask.reshape(-1, 32).sum(axis=1).tolist() == [1, 1]
    assert flag.atomic and flag.mask.all()


def test_any_and_all_of_a_known_predicate_are_known_per_warp() -> None:
    access = store(run("""
__global__ void k(int* out) {
    out[threadIdx.x + 1000 * __any_sync(0xffffffff, threadIdx.x == 40) + 2000 * __all_sync(0xffffffff, threadIdx.x < 32)] = 0;
}"""))
    offsets = access.addr[access.mask] // 4 - np.arange(64)
    # warp 0 (lanes 0-31): none is 40, all are < 32; warp 1 (32-63): lane 40 is, none is < 32
    assert np.array_equal(offsets, [2000] * 32 + [1000] * 32)


def test_a_branch_on_a_vote_over_data_is_warp_uniform_not_data() -> None:
    from cudalens.analysis.api import analyze_text

    source = """
__global__ void k(float* out, const float* in) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    float v = in[i];
    if (__all_sync(0xffffffff, v > 0.0f)) {
        for (int r = 0; r < 16; ++r) v = v * v + in[(i + r) % 64];
        out[i] = v;
    }
}
void host(float* o, const float* i) { k<<<4, 256>>>(o, i); }
"""
    result = run(source.split("void host")[0])
    [branch] = [b for b in result.branches if b.kind == "if"]
    assert UNIFORM in branch.deps and DATA not in branch.deps
    assert not [f for f in analyze_text("k.cu", source).findings if f.code == "CL203"]
    # the same body under the predicate itself is a branch on data
    assert [f for f in analyze_text("k.cu", source.replace("__all_sync(0xffffffff, v > 0.0f)", "v > 0.0f")).findings
            if f.code == "CL203"]


def test_a_rank_among_the_lanes_a_shared_mask_sets_is_a_compaction() -> None:
    # `__popcll(m & ((1 << lane) - 1))` with `m` loaded once for the warp: the set lanes' ranks are 0, 1, 2... in
    # lane order whatever `m` is (sampled as every running lane set, not exact); a mask of each lane's own is data
    result = run("""
__global__ void k(const unsigned long long* masks, float* out, float* mine) {
    unsigned long long m = masks[blockIdx.x];
    out[__popcll(m & ((1ull << threadIdx.x) - 1))] = 0.0f;
    unsigned long long own = masks[threadIdx.x];
    mine[__popcll(own & ((1ull << threadIdx.x) - 1))] = 0.0f;
}""", block=(32, 1, 1))
    rank = store(result)
    assert np.array_equal(rank.addr // 4, np.arange(32)) and ELECTED in rank.deps and DATA not in rank.deps
    own = store(result, "mine")
    assert own.addr is None and DATA in own.deps


def test_builtin_ctz_and_the_64_bit_bit_functions_of_known_values() -> None:
    access = store(run("""
__global__ void k(unsigned* out) {
    out[__builtin_ctz(16u) + 10 * __popcll(0xF00000000ull) + 100 * __ffsll(0x100000000ull)] = 0;
}"""))
    assert (access.addr // 4 == 4 + 10 * 4 + 100 * 33).all()
