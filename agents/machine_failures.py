"""Failures of the machine, not of the kernel: no GPU or driver, no CUDA toolkit, a worker without torch.

A repair round cannot fix these, so the loop stops at the first evaluation that shows one (round 0, or the first
candidate of a file without `ModelNew`) instead of paying the Coder for rounds that fail the same way, and says
the machine's words in its final message.
"""

from __future__ import annotations

import re

from cudalens.agents.evaluation import Evaluation
from cudalens.analysis.file_kinds import builds_cuda
from cudalens.profiler.compile import find_nvcc
from cudalens.profiler.gpu_specs import GpuFacts, NoGpu

# What torch, the driver and the build say when the machine lacks something, one alternative a cause.
_MACHINE = re.compile(
    r"CUDA_HOME environment variable is not set"
    r"|No CUDA GPUs are available"
    r"|Found no NVIDIA driver"
    r"|Torch not compiled with CUDA enabled"
    r"|CUDA driver version is insufficient"
    r"|NVIDIA driver on your system is too old"
    r"|nvcc: (?:command )?not found"
    r"|No such file or directory: '(?:[^']*/)?nvcc'"
    r"|Ninja is required to load C\+\+ extensions"
    r"|No module named '?torch'?"
    r"|cannot start the worker"
)


def machine_failure(evaluation: Evaluation | None) -> str | None:
    """The line of the evaluation's output that blames the machine, or None: the last such line of each text,
    which in a traceback is the exception's own (`OSError: CUDA_HOME environment variable is not set`), not the
    source line that raised it."""
    if evaluation is None:
        return None
    texts = (evaluation.correctness.message, evaluation.compile.log, evaluation.correctness.traceback, *evaluation.notes)
    for text in texts:
        for line in reversed((text or "").splitlines()):
            if _MACHINE.search(line):
                return line.strip()[:300]
    return None


def machine_problem(path: str, text: str, allow_torch_ops: bool, gpu: GpuFacts | NoGpu) -> str | None:
    """Why this machine cannot evaluate the candidates, or None: checked before anything is compiled or any
    Coder round is paid for (the editor's Optimize and `cudalens optimize` alike). Candidates are CUDA kernels
    (unless `allow_torch_ops` lets a pure-PyTorch file run on the CPU), so they need a GPU, and nvcc to build them."""
    cuda = builds_cuda(path, text) or not allow_torch_ops
    if cuda and isinstance(gpu, NoGpu):
        return (f"cudalens: optimizing needs an NVIDIA GPU to test and time the candidates, and this machine has "
                f"none: {gpu.reason}. Nothing was sent to the Coder")
    if cuda and find_nvcc() is None:
        return ("cudalens: optimizing needs the CUDA toolkit (nvcc) to build the candidates, and none was found "
                "on PATH or in /usr/local/cuda*. Nothing was sent to the Coder")
    return None
