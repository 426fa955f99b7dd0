"""Cooperative groups in the lane interpreter, one construct a test, in the shapes llm.c and cuda-samples use them:
ranks and sizes of blocks, tiles and grids, `sync()` as the barrier it is, `cg::reduce`, a tile passed to a
helper."""

from __future__ import annotations

import numpy as np

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.model import build_models
from cudalens.analysis.positions import LineIndex
from cudalens.analysis.unit import build_unit
from cudalens.analysis.values import DATA, ELECTED

HEADER = """
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
"""


def _run(body: str, block: str = "128", params: str = "float* out", args: str = "a"):
    source = f"{HEADER}__global__ void k({params}) {{\n{body}\n}}\nvoid host(float* a) {{ k<<<8, {block}>>>({args}); }}\n"
    unit = build_unit(source.encode())
    [model] = build_models("k.cu", unit, LineIndex(source), None)
    return model.primary


def _stored(run) -> np.ndarray:
    """The value each thread stores to out[threadIdx.x] (the tests store the value under test as the index)."""
    [store] = [a for a in run.accesses if a.base == "out" and a.write]
    return store.addr // 4


def test_block_thread_rank_is_the_linear_thread_index() -> None:
    run = _run("cg::thread_block block = cg::this_thread_block();\nout[block.thread_rank()] = 0;", "dim3(16, 8)")
    assert np.array_equal(_stored(run), np.arange(128))


def test_tile_rank_meta_rank_and_sizes() -> None:
    body = """cg::thread_block block = cg::this_thread_block();
cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
out[warp.meta_group_rank() * 1000 + warp.thread_rank() + warp.size() * 100000 + warp.meta_group_size() * 10000000] = 0;"""
    lanes = np.arange(128)
    assert np.array_equal(_stored(_run(body)), lanes // 32 * 1000 + lanes % 32 + 3200000 + 40000000)


def test_dynamic_tiled_partition_and_auto() -> None:
    body = "auto tile = cg::tiled_partition(cg::this_thread_block(), 16);\nout[tile.thread_rank()] = 0;"
    assert np.array_equal(_stored(_run(body)), np.arange(128) % 16)


def test_thread_rank_depends_on_the_thread_index_that_varies() -> None:
    run = _run("cg::thread_block b = cg::this_thread_block();\nout[b.thread_rank()] = 0;")
    [store] = run.accesses
    assert "tid.x" in store.deps and "tid.y" not in store.deps


def test_block_sync_is_a_barrier_and_tile_sync_orders_a_warp() -> None:
    body = """__shared__ float s[128];
cg::thread_block block = cg::this_thread_block();
cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
s[threadIdx.x] = 1.0f;
block.sync();
out[threadIdx.x] = s[127 - threadIdx.x];
warp.sync();
cg::sync(block);"""
    run = _run(body)
    assert [b.name for b in run.barriers] == ["sync", "sync"]
    reads = [a for a in run.accesses if a.base == "s" and not a.write]
    assert reads[0].epoch == 1 and reads[0].warp_epoch == 0


def test_reduce_gives_every_lane_of_a_tile_the_tile_result() -> None:
    body = """cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
int total = cg::reduce(warp, (int)warp.thread_rank(), cg::plus<int>());
int most = cg::reduce(warp, (int)threadIdx.x, cg::greater<int>{});
out[total + most] = 0;"""
    lanes = np.arange(128)
    assert np.array_equal(_stored(_run(body)), 496 + (lanes // 32 * 32 + 31))


def test_reduce_of_data_is_unknown_but_not_thread_dependent() -> None:
    body = """cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
float v = cg::reduce(warp, out[threadIdx.x], cg::plus<float>{});
if (v > 0.0f) out[0] = v;"""
    [branch] = _run(body).branches
    assert branch.cond is None and "data" in branch.deps and not branch.thread_dependent


def test_an_integer_reduce_over_a_partition_by_loaded_data_runs_once_per_label() -> None:
    body = """cg::coalesced_group active = cg::coalesced_threads();
int key = keys[threadIdx.x];
auto same = cg::labeled_partition(active, key);
int most = cg::reduce(same, key, cg::greater<int>());
float sum = cg::reduce(same, out[threadIdx.x], cg::plus<float>());
auto quarter = cg::labeled_partition(active, (int)(threadIdx.x / 8));
int total = cg::reduce(quarter, key, cg::plus<int>{});
same.sync();
out[threadIdx.x] = sum + most + total;"""
    run = _run(body, params="float* out, const int* keys", args="a, (const int*)a")
    [split] = run.split_collectives  # the float sum is shuffles; the quarters follow the thread index
    assert split.label == "key" and "data" in split.deps and ts.text(split.node).startswith("cg::reduce(same, key")
    assert run.barriers == []  # a partition's sync orders the lanes of a warp, not the block


def test_a_tile_passed_to_a_helper_keeps_its_shape() -> None:
    source = f"""{HEADER}
__device__ float first(cg::thread_block_tile<32>& warp, const float* x) {{ return x[warp.thread_rank() * 2]; }}
__global__ void k(const float* in, float* out) {{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    out[threadIdx.x] = first(warp, in);
}}
void host(float* a) {{ k<<<8, 64>>>(a, a); }}
"""
    [model] = build_models("k.cu", build_unit(source.encode()), LineIndex(source), None)
    [load] = [a for a in model.primary.accesses if a.base == "in"]
    assert np.array_equal(load.addr // 4, np.arange(64) % 32 * 2)


def test_coalesced_threads_rank_counts_the_active_lanes() -> None:
    body = "if (threadIdx.x % 2 == 0) {\n    cg::coalesced_group g = cg::coalesced_threads();\n    out[g.thread_rank()] = 0;\n}"
    [store] = _run(body, "64").accesses
    assert np.array_equal(store.addr[store.mask] // 4, np.arange(64)[::2] % 32 // 2)


def test_a_partitions_rank_counts_the_lanes_with_its_label() -> None:
    body = """cg::coalesced_group active = cg::coalesced_threads();
auto quarter = cg::labeled_partition(active, (int)(threadIdx.x % 4));
out[quarter.thread_rank()] = 0;"""
    assert np.array_equal(_stored(_run(body, "64")), np.arange(64) % 32 // 4)


def test_a_partition_by_loaded_data_ranks_one_sample_of_its_lanes() -> None:
    # which lanes share a label is the data's: the ranks are those of one label for all, marked as a sample
    body = """if (keys[threadIdx.x] > 0) {
    auto same = cg::labeled_partition(cg::coalesced_threads(), keys[threadIdx.x]);
    if (same.thread_rank() == 0) out[0] = 1;
}"""
    run = _run(body, "64", params="float* out, const int* keys", args="a, (const int*)a")
    [store] = [a for a in run.accesses if a.base == "out"]
    assert store.mask.reshape(-1, 32).sum(axis=1).tolist() == [1, 1] and not store.exact_mask


def test_the_leader_of_a_partition_is_a_choice_of_lane_not_of_data() -> None:
    # `thread_rank() == 0` of a partition by a label (here one the code computes, as gsplat's `gid = idx % N`)
    # holds in one lane of each group: a branch on it follows the lane the data elect, not the data's values
    body = """int idx = blockIdx.x * blockDim.x + threadIdx.x;
auto warp = cg::tiled_partition<32>(cg::this_thread_block());
auto same = cg::labeled_partition(warp, idx % n);
if (same.thread_rank() == 0) out[0] = 1;"""
    run = _run(body, "64", params="float* out, int n", args="a, 7")
    [branch] = [b for b in run.branches if b.kind == "if"]
    assert ELECTED in branch.deps and DATA not in branch.deps and branch.cond is None


def test_grid_rank_depends_on_the_block() -> None:
    run = _run("cg::grid_group grid = cg::this_grid();\nout[grid.thread_rank()] = 0;\ngrid.sync();")
    [store] = run.accesses
    assert "bid" in store.deps and len(run.barriers) == 1


def test_a_block_scope_cuda_barrier_wait_is_a_barrier() -> None:
    source = f"""{HEADER}
#include <cuda/barrier>
__device__ void publish(cuda::barrier<cuda::thread_scope_block>& barrier, cg::thread_block_tile<32>& tile32,
                        float* tmp) {{
    if (tile32.thread_rank() == 0) tmp[tile32.meta_group_rank()] = 1.0f;
    auto token = barrier.arrive();
    barrier.wait(std::move(token));
}}
__global__ void k(float* out) {{
    __shared__ float tmp[32];
    __shared__ cuda::barrier<cuda::thread_scope_block> barrier;
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(block);
    publish(barrier, tile32, tmp);
    out[threadIdx.x] = tmp[tile32.thread_rank()];
}}
void host(float* a) {{ k<<<8, 128>>>(a); }}
"""
    [model] = build_models("k.cu", build_unit(source.encode()), LineIndex(source), None)
    assert len(model.primary.barriers) == 1
    [read] = [a for a in model.primary.accesses if a.base == "tmp" and not a.write]
    assert read.epoch == 1


def test_a_strided_loop_is_marked_and_a_unit_step_one_is_not() -> None:
    body = """int lane = threadIdx.x % 32;
for (int i = lane; i < 40; i += 32) out[i] = 0;
int j = lane;
for (; j < 40; j += 32) out[j] = 0;
for (int t = lane; t < 40; ++t) out[t] = 0;"""
    loops = [b for b in _run(body).branches if b.kind == "loop"]
    by_line = {}
    for b in loops:
        by_line.setdefault(b.node.start_point[0], set()).add(b.strided)
    assert list(by_line.values()) == [{True}, {True}, {False}]
