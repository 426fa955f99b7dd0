"""One profiled round of the loop at KernelBench's own sizes, on three level-1 problems of different kinds (issue 13).

A round is what `cudalens optimize` does with one candidate before it asks the Coder again:
`ProfilerEvaluator.evaluate` — build, the correctness test with its anti-cheat checks, adaptive timing, the ncu
profile with per-line counters. The problems, at the sizes KernelBench's files give:
- 25_Swish 4096×393216 (elementwise, 6.4 GB in): benchmarks/swish_cases.py's honest kernel;
- 47_Sum_reduction_over_a_dimension 128×4096×4095 over dim 1 (a reduction, 8.6 GB in): optimize_problems.py's
  fast sum;
- 1_Square_matrix_multiplication_ N=4096 (a matmul): a 32×32 shared-memory tiled kernel.
Round 1 of each starts from a new worker and an empty TORCH_EXTENSIONS_DIR (the first round of a run), but keeps
the fast builds' precompiled header and bindings from earlier runs on the machine (for a round 1 without them:
cudaforge_side_by_side.py, which empties that cache too); each later round
takes a new candidate (another comment in its CUDA, so that it rebuilds, as every round of a loop does).

    python benchmarks/full_size_rounds.py [--problems 25_Swish,47_Sum,1_Matmul] [--rounds 3]

Prints each round's seconds with its stages, and the median of the later rounds against the goal (≤ 10 s).
Exit status 0 when every round found its candidate correct, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cudaforge_side_by_side import cudalens_round, run_evaluator  # noqa: E402
from cudaforge_side_by_side import reference as swish_reference  # noqa: E402
from optimize_problems import HEAD, SUM_FAST, SUM_REF  # noqa: E402
from swish_cases import swish_file  # noqa: E402

GOAL_S = 10.0

# KernelBench's 47_Sum_reduction_over_a_dimension, its sizes and its init argument
SUM_KERNELBENCH = """

class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1


def get_inputs():
    return [torch.rand(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
"""

MATMUL_REFERENCE = HEAD + """

class Model(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 2048 * 2


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
"""

MATMUL_CANDIDATE = MATMUL_REFERENCE + r'''

cuda_src = r"""
#include <torch/extension.h>

#define TILE 32
// each block computes a 32×32 tile of C, walking K in 32-wide tiles of A and B staged in shared memory
__global__ void matmul_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        as[threadIdx.y][threadIdx.x] = (row < n && k0 + threadIdx.x < n) ? a[(size_t)row * n + k0 + threadIdx.x] : 0.f;
        bs[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < n) ? b[(size_t)(k0 + threadIdx.y) * n + col] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[(size_t)row * n + col] = acc;
}

torch::Tensor run(torch::Tensor a, torch::Tensor b) {
    int n = a.size(0);
    auto c = torch::empty({n, n}, a.options());
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    matmul_kernel<<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}
"""

ext = load_inline(name="cl_matmul_full", cpp_sources="torch::Tensor run(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=cuda_src, functions=["run"], extra_cuda_cflags=["-O3", "-lineinfo"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, A, B):
        return ext.run(A.contiguous(), B.contiguous())
'''


def problems() -> dict[str, tuple[str, str, str]]:
    """name -> (reference text, candidate text, the line of its CUDA that a new round's comment goes before)"""
    swish_ref = swish_reference(4096, 393216)
    sum_ref = HEAD + SUM_KERNELBENCH
    return {
        "25_Swish": (swish_ref, swish_file(4096, 393216), "__global__ void swish_kernel"),
        "47_Sum": (sum_ref, SUM_FAST.replace(SUM_REF, SUM_KERNELBENCH), "__global__ void sum_kernel"),
        "1_Matmul": (MATMUL_REFERENCE, MATMUL_CANDIDATE, "__global__ void matmul_kernel"),
    }


def main() -> int:
    every = problems()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default=",".join(every))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    chosen = [p.strip() for p in args.problems.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in every]
    if unknown:
        print(f"full_size_rounds: unknown problem {', '.join(unknown)} (one of {', '.join(every)})", file=sys.stderr)
        return 2
    ok = True
    for name in chosen:
        ref, cand, anchor = every[name]
        work = Path(tempfile.mkdtemp(prefix=f"cudalens-full-{name}-"))
        os.environ["TORCH_EXTENSIONS_DIR"] = str(work / "ext")  # an empty build cache for round 1
        evaluator = run_evaluator(ref)  # as `cudalens optimize` makes it
        later: list[float] = []
        try:
            for k in range(1, args.rounds + 1):
                source = cand.replace(anchor, f"// round {k}\n{anchor}", 1)
                seconds, correct, said = cudalens_round(evaluator, source)
                ok &= correct
                if k > 1 and correct:
                    later.append(seconds)
                kind = "new worker; the fast builds' header and bindings kept" if k == 1 else "new candidate"
                print(f"{name} round {k} ({kind}): {seconds:.1f} s, {'correct' if correct else 'FAILED'}; {said}",
                      flush=True)
        finally:
            evaluator.close()
            shutil.rmtree(work, ignore_errors=True)
        if later:
            median = statistics.median(later)
            verdict = "met" if median <= GOAL_S else "NOT met"
            print(f"{name}: a new candidate's round {median:.1f} s median of {len(later)} (goal <= {GOAL_S:.0f} s: "
                  f"{verdict})", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
