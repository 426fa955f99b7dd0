"""The lane interpreter's semantics, directly: per-thread addresses, masks through branches, early returns and
loops, barriers and the threads that reach them, helpers, templates, what loaded data taints.

Each test runs one small kernel for one block (analysis/simulate.py's `Simulator`) and checks the recorded
accesses, branches and barriers, not a rule's finding: the rules read exactly these.
"""

from __future__ import annotations

import numpy as np

from cudalens.analysis.simulate import LOOP_SAMPLES, SimResult, Simulator
from cudalens.analysis.unit import build_unit
from cudalens.analysis.values import DATA, OUTCOME, TID_X, TID_Y, UNIFORM, data_dependent


def run(source: str, block=(64, 1, 1), params: dict[str, int] | None = None,
        template_values: dict[str, int] | None = None) -> SimResult:
    unit = build_unit(source.encode())
    [kernel] = unit.kernels
    return Simulator(unit, kernel, block, params or {}, template_values or {}).run()


def accesses(result: SimResult, base: str, write: bool | None = None):
    return [a for a in result.accesses if a.base == base and (write is None or a.write == write)]


def lanes(n: int) -> np.ndarray:
    return np.arange(n)


def test_each_thread_gets_its_own_index_and_byte_address():
    result = run("__global__ void k(float* a) { a[threadIdx.x] = 0.0f; }")
    [store] = accesses(result, "a", write=True)
    assert store.space == "global" and store.size == 4 and store.mask.all()
    assert (store.addr == 4 * lanes(64)).all()
    assert TID_X in store.deps


def test_a_2d_block_numbers_x_fastest_and_shared_rows_use_the_declared_width():
    result = run("""
__global__ void k(float* out) {
    __shared__ float tile[16][17];
    tile[threadIdx.y][threadIdx.x] = 1.0f;
}""", block=(16, 16, 1))
    [store] = accesses(result, "tile", write=True)
    x, y = lanes(256) % 16, lanes(256) // 16
    assert store.space == "shared" and (store.addr == 4 * (y * 17 + x)).all()
    assert {TID_X, TID_Y} <= store.deps


def test_a_branch_masks_its_body_and_the_else_gets_the_rest():
    result = run("""
__global__ void k(float* a, float* b) {
    if (threadIdx.x < 10) a[threadIdx.x] = 1.0f;
    else b[threadIdx.x] = 2.0f;
}""")
    [taken], [other] = accesses(result, "a"), accesses(result, "b")
    assert taken.mask.sum() == 10 and other.mask.sum() == 54
    assert not (taken.mask & other.mask).any()
    [branch] = [b for b in result.branches if b.kind == "if"]
    assert branch.thread_dependent and branch.cond[:10].all() and not branch.cond[10:].any()


def test_an_early_return_removes_its_threads_from_what_follows():
    result = run("""
__global__ void k(float* a, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    a[i] = 0.0f;
}""", params={"n": 16})
    [store] = accesses(result, "a")
    assert store.mask.sum() == 16 and store.mask[:16].all()


def test_a_grid_stride_loop_is_sampled_and_steps_by_the_block():
    result = run("""
__global__ void k(float* a, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) a[i] = 0.0f;
}""", params={"n": 1 << 20})
    stores = accesses(result, "a", write=True)
    assert len(stores) == LOOP_SAMPLES
    assert (stores[1].addr - stores[0].addr == 4 * 64).all()


def test_a_barrier_records_who_reaches_it_and_orders_what_comes_after():
    result = run("""
__global__ void k(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[63 - threadIdx.x];
}""")
    [barrier] = result.barriers
    assert barrier.mask.all()
    [write] = accesses(result, "s", write=True)
    [read] = accesses(result, "s", write=False)
    assert read.epoch > write.epoch
    assert (read.addr == 4 * (63 - lanes(64))).all()


def test_a_barrier_inside_a_thread_dependent_branch_is_reached_by_some_threads():
    result = run("""
__global__ void k(float* a) {
    if (threadIdx.x < 32) { __syncthreads(); }
    a[threadIdx.x] = 0.0f;
}""")
    [barrier] = result.barriers
    assert barrier.mask.sum() == 32 and TID_X in barrier.cond_deps


def test_a_branch_on_loaded_data_depends_on_data_and_one_address_for_all_is_uniform():
    result = run("""
__global__ void k(const float* a, float* b) {
    if (a[threadIdx.x] > 0.0f) b[threadIdx.x] = 1.0f;
    if (a[0] > 0.0f) b[0] = 1.0f;
}""")
    per_thread, shared = [b for b in result.branches if b.kind == "if"]
    assert DATA in per_thread.deps and per_thread.cond is None  # unknown: what was loaded decides
    assert shared.deps == {UNIFORM} and not shared.thread_dependent  # the same in every thread: no divergence


def test_a_size_updated_under_a_block_uniform_data_condition_is_one_sampled_value_for_the_block():
    result = run("""
__global__ void k(const float* h, float* out, int n) {
    int top = 8;
    if (h[0] == 0.0f) top--;
    out[top * 64 + threadIdx.x] = 1.0f;
    int mine = 8;
    if (h[threadIdx.x] == 0.0f) mine--;
    out[mine * 64 + threadIdx.x] = 2.0f;
}""")
    [uniform, own] = accesses(result, "out", write=True)
    # every thread holds the same `top`: the lanes are side by side whatever the data chose; the value is a sample
    assert {UNIFORM, OUTCOME} <= uniform.deps and DATA not in uniform.deps and uniform.sampled
    assert (np.diff(uniform.addr) == 4).all()
    assert DATA in own.deps and own.sampled  # each thread's own `mine`


def test_a_comment_among_the_arguments_is_not_one():
    result = run("""
__device__ void put(float* out, int i) { out[i] = 1.0f; }
__global__ void k(float* out) {
    put(
        // where
        out,
        /* which */ threadIdx.x);
}""")
    [store] = accesses(result, "out", write=True)
    assert (store.addr == 4 * lanes(64)).all()


def test_an_assignment_in_an_arm_of_a_conditional_on_data_follows_the_data():
    result = run("""
__global__ void k(const float* x, float* out) {
    int j;
    float r = x[threadIdx.x] > 0.0f ? (j = 1, 1.0f) : (j = 0, -1.0f);
    out[j] = r;
}""")
    [store] = accesses(result, "out", write=True)
    assert DATA in store.deps  # j is 1 in some lanes and 0 in others, as the data decide


def test_a_device_helper_is_inlined_with_its_arguments():
    result = run("""
__device__ int twice(int i) { return 2 * i; }
__global__ void k(float* a) { a[twice(threadIdx.x)] = 0.0f; }
""")
    [store] = accesses(result, "a")
    assert (store.addr == 8 * lanes(64)).all()


def test_a_template_value_is_a_constant_in_the_body():
    result = run("""
template <int STRIDE>
__global__ void k(float* a) { a[threadIdx.x * STRIDE] = 0.0f; }
""", template_values={"STRIDE": 4})
    [store] = accesses(result, "a")
    assert (store.addr == 16 * lanes(64)).all()


def _if_deps(result: SimResult) -> list[frozenset[str]]:
    return [b.deps for b in result.branches if b.kind == "if"]


def test_what_the_compiler_fixes_is_never_loaded_data():
    # a helper's template arguments (an enum the interpreter cannot evaluate, a default, a macro whose value has
    # a comment after it), a literal 0 or an address passed for a pointer, a constexpr, a variable template and
    # `if constexpr`: branches on them are the same in every thread (values.compile_time)
    result = run("""
#define MODE_TRI 3  // trilinear
enum class F { kBox, kTent };
int pick(int);
template <typename T> constexpr int PASSES = sizeof(T) * 2;
template <bool CUBE, int MODE, F SHAPE, int TAPS = 1>
__device__ void h(const float* in, float* grad, int pass) {
    float v = in[threadIdx.x];
    constexpr int lanes = pick(4);
    if (grad && MODE == MODE_TRI) v += 1.0f;
    if (CUBE && v < 0.0f) v = 0.0f;
    if (SHAPE == F::kTent) v *= 2.0f;
    if (TAPS > 1) v *= 3.0f;
    if (lanes > 2) v *= 4.0f;
    if (pass != PASSES<float> - 1) v *= 5.0f;
    if constexpr (sizeof(float) > pick(2)) v *= 6.0f;
    grad[threadIdx.x] = v;
}
__global__ void k(const float* in, float* out, int pass) {
    float d = 0.0f;
    h<false, MODE_TRI, F::kTent>(in, 0, pass);
    h<false, MODE_TRI, F::kBox>(in, &d, pass);
}
""")
    assert _if_deps(result) and not any(data_dependent(deps) for deps in _if_deps(result))
    known = [b.cond[0] for b in result.branches if b.kind == "if" and b.cond is not None]
    # grad && …: 0 (a literal 0), 1 (`&d`); CUBE && …: 0; TAPS > 1: 0 (the default)
    assert known.count(0) >= 3 and 1 in known


def test_a_macro_with_a_comment_after_its_value_is_that_value():
    # `#define STRIDE 4  // …`: the preprocessor drops the comment; a `//` left in the body made the macro unknown
    result = run("""
#define STRIDE 4  // elements per lane
#define NAME "a//b" /* not a comment inside a string */
__global__ void k(float* a) { a[threadIdx.x * STRIDE] = 0.0f; }
""")
    [store] = accesses(result, "a")
    assert (store.addr == 16 * lanes(64)).all()


def test_an_atomic_is_recorded_as_an_atomic_write_of_one_address():
    result = run("__global__ void k(int* counter) { atomicAdd(&counter[0], 1); }")
    [atomic] = [a for a in result.accesses if a.atomic]
    assert atomic.base == "counter" and atomic.write and (atomic.addr == 0).all()


def test_floating_point_work_is_counted_per_thread():
    result = run("__global__ void k(float* a) { float x = a[threadIdx.x]; a[threadIdx.x] = x * x + x; }")
    assert result.float_ops >= 2


def test_a_block_over_1024_threads_is_cut_at_the_hardware_limit():
    result = run("__global__ void k(float* a) { a[threadIdx.x] = 0.0f; }", block=(2048, 1, 1))
    [store] = accesses(result, "a")
    assert store.mask.size == 1024


def test_a_field_of_a_local_vector_does_not_stop_the_run():
    # `q.x` once went round field_expression and ref until the recursion limit: nothing after it was seen
    result = run("""
__global__ void k(const float4* in, float* out) {
    float4 q = in[threadIdx.x];
    float s = q.x + q.w;
    out[threadIdx.x * 2] = s;
}""")
    assert not result.truncated
    [store] = accesses(result, "out", write=True)
    assert (store.addr == 8 * lanes(64)).all()


def test_sizes_that_mask_thread_indices_or_meet_the_warp_width_are_warp_sized():
    result = run("""
__device__ unsigned codelet(unsigned size) { return 2 * threadIdx.x - (threadIdx.x & (size - 1)); }
__global__ void k(unsigned* out, unsigned size, int width, int n, int bits) {
    if (width < 32) return;
    unsigned pos = codelet(size / 4);
    if (pos < n) out[pos] = threadIdx.x & bits ? 1 : 0;
}""", params={"size": 4096, "width": 4096, "n": 4096, "bits": 4096})
    # through a helper's parameter and a quarter of the size; `bits` masks a thread index too; `n` only bounds
    assert result.warp_sized == {"size", "width", "bits"}


def test_accesses_through_a_volatile_pointer_say_so():
    result = run("""
__device__ void put(volatile float* v) { v[threadIdx.x] = 1.0f; }
__global__ void k() {
    __shared__ float s[64];
    volatile float* w = s;
    w[threadIdx.x] = 0.0f;
    put(s);
    s[threadIdx.x] = 2.0f;
}""")
    assert [a.volatile for a in accesses(result, "s", write=True)] == [True, True, False]


def test_a_return_on_loaded_data_leaves_the_other_lanes_running_as_a_superset():
    result = run("""
__global__ void k(const float* in, int* count, float* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    if (in[i] <= 0.0f) return;
    atomicAdd(count, 1);
    out[i] = 1.0f;
}""", params={"n": 16})
    [atomic] = [a for a in result.accesses if a.atomic]
    [store] = accesses(result, "out", write=True)
    # the exact return still removes threads 16..; the data's return keeps the rest, which is then a guess
    assert atomic.mask.sum() == 16 and store.mask[:16].all() and store.mask.sum() == 16
    assert not atomic.exact_mask and not store.exact_mask


def test_an_exit_in_both_arms_of_a_condition_on_data_leaves_every_lane():
    result = run("""
__global__ void k(const float* in, float* out, int* count) {
    if (in[threadIdx.x] < 0.0f) { out[threadIdx.x] = 0.0f; return; }
    else { out[threadIdx.x] = 1.0f; return; }
    atomicAdd(count, 1);
}""")
    assert len(accesses(result, "out", write=True)) == 2
    assert not [a for a in result.accesses if a.atomic]


def test_a_barrier_after_a_return_on_data_is_reached_by_every_thread_still_running():
    result = run("""
__global__ void k(const float* in, float* out) {
    __shared__ float s[64];
    if (in[threadIdx.x] < 0.0f) return;
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[63 - threadIdx.x];
}""")
    [barrier] = result.barriers
    assert barrier.mask.all() and barrier.alive.all() and not barrier.cond_deps


def test_a_break_on_data_keeps_the_loop_running_as_a_superset_until_the_loop_ends():
    result = run("""
__global__ void k(const float* in, int* count, float* out, int n) {
    int last = 0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        if (in[j] < 0.0f) break;
        atomicAdd(count, 1);
        last = j;
    }
    out[threadIdx.x] = 1.0f;
    out[last] = 2.0f;
}""", params={"n": 4096})
    atomics = [a for a in result.accesses if a.atomic]
    assert len(atomics) > 1 and all(a.mask.all() and not a.exact_mask for a in atomics)
    after, indexed = accesses(result, "out", write=True)
    assert after.exact_mask  # every lane leaves the loop, whichever way
    assert DATA in indexed.deps and indexed.sampled  # how far each lane got is the data's


def test_what_a_helper_returns_after_a_return_on_data_follows_the_data():
    result = run("""
__device__ int kept_or_first(const int* keep, int i) {
    if (keep[i] == 0) return 0;
    return i;
}
__global__ void k(const int* keep, float* out) {
    out[kept_or_first(keep, threadIdx.x) * 2] = 1.0f;
    out[threadIdx.x] = 2.0f;
}""")
    gathered, plain = accesses(result, "out", write=True)
    assert DATA in gathered.deps and gathered.addr is None  # 0 or the lane's own: the data's choice
    assert plain.exact_mask and not plain.sampled  # the helper's guess ends with the helper


def test_a_helper_whose_returns_agree_keeps_the_value():
    result = run("""
__device__ int own(const int* keep, int i) {
    if (keep[i] == 0) return i;
    return i;
}
__global__ void k(const int* keep, float* out) {
    out[own(keep, threadIdx.x) * 2] = 1.0f;
}""")
    [store] = accesses(result, "out", write=True)
    assert (store.addr == 8 * lanes(64)).all() and DATA in store.deps  # known, and marked as a sample


def test_a_break_in_a_switch_leaves_the_switch_not_the_loop_and_every_case_runs():
    result = run("""
__global__ void k(const int* kind, float* out, int n) {
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        switch (kind[j]) {
        case 0: out[j] = 0.0f; break;
        default: out[j + n] = 1.0f; out[j + 2 * n] = 2.0f; break;
        }
        out[j + 3 * n] = 3.0f;
    }
}""", params={"n": 4096})
    stores = accesses(result, "out", write=True)
    # two sampled iterations, each with both cases (the default's first statement too) and the store after
    assert len(stores) == 2 * 4 and all(s.mask.all() for s in stores)


def test_a_return_in_one_case_leaves_the_other_lanes_running():
    result = run("""
__global__ void k(const int* kind, float* out, int* count) {
    switch (kind[threadIdx.x]) {
    case 0: return;
    case 1: out[threadIdx.x] = 1.0f; break;
    }
    atomicAdd(count, 1);
}""")
    [atomic] = [a for a in result.accesses if a.atomic]
    assert atomic.mask.all() and not atomic.exact_mask


def test_what_a_block_wide_vote_returns_is_the_same_in_every_thread():
    result = run("""
__global__ void k(const float* in, float* out) {
    if (__syncthreads_or(in[threadIdx.x] > 0.0f)) out[threadIdx.x] = 1.0f;
}""")
    [branch] = [b for b in result.branches if b.kind == "if"]
    assert branch.deps == {UNIFORM} and not branch.thread_dependent  # data, but one outcome for the block
