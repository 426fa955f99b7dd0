"""A public optimization ladder as KernelBench problems: one PyTorch reference, then the kernel at each step.

A `Ladder` holds the reference (`Model`, `get_inputs`, `get_init_inputs`, the forward's argument names) and the
host function shared by its steps, with `LAUNCH` where each step's launch goes; a `Step` holds one kernel, its
launch, and the method whose application gave the next step. `render` writes a step as a standalone KernelBench
file (`Model` the reference, `ModelNew` the step's kernel through `load_inline`), the form the optimize loop
evaluates. A case is (step k, the method that gave step k+1); whether step k+1 is really faster is measured on
the GPU (run.py), never assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

REFERENCE = '''
{preamble}
class Model(nn.Module):
    def forward(self, {params}) -> torch.Tensor:
{body}


{sizes}


def get_inputs():
    return {inputs}


def get_init_inputs():
    return []

'''

# CUDA helpers the steps share: a warp's sum in every lane, and a block's sum in thread 0 (blockDim.x a multiple
# of 32, at most 1024)
WARP_ADD = '''
__device__ __forceinline__ float warp_add(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
'''

BLOCK_ADD = WARP_ADD + '''
__device__ __forceinline__ float block_add(float v) {
    __shared__ float warps[32];
    v = warp_add(v);
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? warps[threadIdx.x] : 0.0f;
    return threadIdx.x < 32 ? warp_add(v) : 0.0f;
}
'''

# eight bf16 values in one 128-bit load or store (karpathy/llm.c's x128 `Packed128`); needs cuda_bf16.h
BF16_X128 = '''
struct alignas(16) bf16x8 {
    __nv_bfloat162 h[4];
};
'''

ONE_INPUT_HOST = '''
torch::Tensor run(torch::Tensor x) {
    DIMS
    auto y = RESULT;
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();SETUP
    LAUNCH
    return y;
}
'''


def one_input_host(result: str, matrix: bool = False, setup: str = "") -> str:
    """The host function of a ladder whose kernels take one fp32 tensor `x` (`in`) and fill `y` (`out`): `n` its
    size, or `rows` and `cols` for a matrix; `setup` comes before the launch."""
    dims = "const int rows = x.size(0), cols = x.size(1);" if matrix else "const int n = x.numel();"
    return (ONE_INPUT_HOST.replace("DIMS", dims).replace("RESULT", result)
            .replace("SETUP", f"\n    {setup}" if setup else ""))


HEADER = '''"""{title}, step {number} of {count}: {step}. {origin}
Rendered by benchmarks/judge_ladders/ladder.py; the kernels were written for cudalens after the public ladder."""

import torch
import torch.nn as nn
import torch.nn.functional as F  # noqa: F401  (the reference may use it)
from torch.utils.cpp_extension import load_inline
'''

BODY = '''
source = """
#include <torch/extension.h>
#include <cuda_fp16.h>
{includes}
{kernel}
{host}
"""

ext = load_inline(
    name="cudalens_ladder_{ext}",
    cpp_sources="{signature};",
    cuda_sources=source,
    functions=["run"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


class ModelNew(nn.Module):
    def forward(self, {args}):
        return ext.run({args})
'''


@dataclass(frozen=True)
class Reference:
    """The KernelBench reference: `Model.forward`'s body, the size constants, `get_inputs`' list."""

    forward: str
    sizes: str
    inputs: str
    preamble: str = ""  # module-level Python the forward uses

    def render(self, args: str) -> str:
        body = "\n".join(f"        {line}" if line else "" for line in self.forward.strip("\n").splitlines())
        params = ", ".join(f"{a.strip()}: torch.Tensor" for a in args.split(","))
        preamble = f"\n{self.preamble.strip()}\n\n" if self.preamble.strip() else ""
        return REFERENCE.format(preamble=preamble, params=params, body=body, sizes=self.sizes.strip(),
                                inputs=self.inputs)


def reference(forward: str, sizes: str, inputs: str, preamble: str = "") -> Reference:
    if "return" not in forward:
        forward = f"return {forward}"
    return Reference(forward, sizes, inputs, preamble)


@dataclass(frozen=True)
class Step:
    name: str  # what this step is, in the ladder's words
    kernel: str  # the step's CUDA: its kernel(s), named so that `judged` is one of them
    launch: str  # host code put at `LAUNCH` in the ladder's host function
    judged: str  # the kernel the Judge looks at (the one the step changed)
    method: str | None  # the method whose application gives the next step (None: the last step)
    also: tuple[str, ...] = ()  # a step that applied a second method at once accepts that one too
    bottlenecks: tuple[str, ...] = ()  # the bottleneck names that describe step k (empty: the method's defaults)


@dataclass(frozen=True)
class Ladder:
    key: str  # file-name prefix
    title: str
    origin: str  # where the ladder comes from (repository, path, licence)
    reference: Reference
    args: str  # the forward's arguments, "a, b"
    signature: str  # the host function's C++ declaration, named run
    host: str  # the host function, with LAUNCH where the step's launch goes
    steps: tuple[Step, ...]
    includes: str = ""

    def render(self, index: int) -> str:
        step = self.steps[index]
        head = HEADER.format(title=self.title, number=index + 1, count=len(self.steps), step=step.name,
                             origin=self.origin)
        body = BODY.format(includes=self.includes, kernel=step.kernel.strip("\n"),
                           host=self.host.replace("LAUNCH", step.launch.strip()), ext=self.file(index)[:-3],
                           signature=self.signature, args=self.args)
        return head + self.reference.render(self.args) + body

    def file(self, index: int) -> str:
        return f"{self.key}_{index + 1:02d}.py"


# the bottlenecks that fit a method's cause, where a step does not say (the Judge's bottleneck is right when it
# names one of them)
BOTTLENECKS: dict[str, tuple[str, ...]] = {
    "coalesce-global-access": ("memory", "latency"),
    "tile-in-shared-memory": ("memory", "compute"),
    "vectorize-memory-access": ("memory", "latency"),
    "pad-shared-memory": ("memory", "latency"),
    "remove-warp-divergence": ("compute", "latency"),
    "use-warp-shuffles": ("memory", "latency"),
    "reduce-instruction-count": ("compute", "latency"),
    "hide-memory-latency": ("latency", "memory"),
    "use-tensor-cores": ("compute",),
    "increase-parallelism": ("latency", "occupancy"),
    "fuse-kernel-launches": ("latency", "memory"),
    "reduce-shared-memory": ("occupancy",),
    "reduce-register-pressure": ("occupancy",),
    "avoid-host-synchronization": ("latency",),
}


@dataclass(frozen=True)
class Case:
    """Step k of a ladder and the method that gave step k+1."""

    ladder: Ladder
    index: int

    @property
    def step(self) -> Step:
        return self.ladder.steps[self.index]

    @property
    def name(self) -> str:
        return self.ladder.file(self.index)[:-3]

    @property
    def method(self) -> str:
        assert self.step.method is not None
        return self.step.method

    @property
    def accepted(self) -> tuple[str, ...]:
        return (self.method, *self.step.also)

    @property
    def bottlenecks(self) -> tuple[str, ...]:
        return self.step.bottlenecks or BOTTLENECKS[self.method]


def cases(ladders: tuple[Ladder, ...]) -> list[Case]:
    return [Case(lad, i) for lad in ladders for i, s in enumerate(lad.steps) if s.method is not None]
