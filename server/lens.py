"""Code lenses above each kernel: a one-line summary, then Run tests · Profile · Optimize.

On a machine the server knows has no GPU, the buttons that would only answer "needs an NVIDIA GPU" give way to one
inert lens that says so (`Run tests · Profile: no GPU on this machine`); a pure-PyTorch `ModelNew` keeps Run tests
(it runs on the CPU).

Optimize is offered only on a KernelBench-style Python file, the one kind the loop works on: its prompts, the
extraction of the Coder's file, the anti-cheat checks and the evaluator all handle a `ModelNew`; a `.cu` candidate
would also have to keep the host launcher its reference file calls, which nothing checks yet. A button that can
only answer "needs a KernelBench-style Python file" is not offered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from lsprotocol import types

from cudalens.agents.machine_failures import machine_problem
from cudalens.analysis.api import KernelInfo
from cudalens.analysis.findings import Finding
from cudalens.profiler.gpu_specs import GpuFacts, NoGpu
from cudalens.server.commands import OPTIMIZE, PROFILE, RUN_TESTS
from cudalens.server.convert import Positions
from cudalens.server.gpu_commands import PROFILE_PLAN, TEST_PLAN, needs_a_gpu

_RUNS = (("▶ Run tests", RUN_TESTS), ("Profile", PROFILE))
_OPTIMIZE = ("Optimize", OPTIMIZE)


def lens_title(kernel: KernelInfo, findings: Sequence[Finding], badge: str | None = None) -> str:
    counts = Counter(f.code for f in findings if f.kernel == kernel.name)
    parts = []
    if kernel.block:
        parts.append("block " + "×".join(map(str, kernel.block)))
    if kernel.static_shared_bytes:
        parts.append(f"{kernel.static_shared_bytes} B shared")
    if counts:
        parts.append(", ".join(f"{code}×{n}" if n > 1 else code for code, n in sorted(counts.items())))
    else:
        parts.append("no findings")
    if badge:
        parts.append(badge)
    return f"cudalens: {' · '.join(parts)}"


def gpu_less(path: str, text: str, allow_torch_ops: bool, gpu: GpuFacts | NoGpu | None) -> frozenset[str]:
    """The run commands that would only answer "needs an NVIDIA GPU" here: none until the GPU is known (`None`),
    or when there is one; each command's own test otherwise (the same the command asks before it runs)."""
    if not isinstance(gpu, NoGpu):
        return frozenset()
    needs = {RUN_TESTS: needs_a_gpu(TEST_PLAN, path, text), PROFILE: needs_a_gpu(PROFILE_PLAN, path, text),
             OPTIMIZE: machine_problem(path, text, allow_torch_ops, gpu) is not None}
    return frozenset(command for command, needed in needs.items() if needed)


def kernel_lenses(
    uri: str, kernels: Sequence[KernelInfo], findings: Sequence[Finding], pos: Positions, badge: str | None = None,
    runs: bool = True, optimizable: bool = True, no_gpu: frozenset[str] = frozenset(),
) -> list[types.CodeLens]:
    """`badge`: the last run's verdict (`✓ 5/5 · 1.8× vs PyTorch`), shown on every kernel of the file. `runs`:
    the buttons that run something (off in an untrusted workspace, where they would only be refused).
    `optimizable`: the file is one Optimize works on (a KernelBench-style Python file). `no_gpu`: the commands
    that need the GPU this machine lacks (`gpu_less`): one inert lens names them instead of their buttons."""
    actions = (*_RUNS, *((_OPTIMIZE,) if optimizable else ())) if runs else ()
    missing = [title.removeprefix("▶ ") for title, command in actions if command in no_gpu]
    actions = tuple((title, command) for title, command in actions if command not in no_gpu)
    lenses = []
    for kernel in kernels:
        at = pos.to_lsp(kernel.name_span.line, 1)
        rng = types.Range(at, at)
        # An empty command id makes an inert lens: the summary is text, not a button.
        lenses.append(types.CodeLens(rng, types.Command(title=lens_title(kernel, findings, badge), command="")))
        lenses += [
            types.CodeLens(rng, types.Command(title=title, command=command, arguments=[uri, kernel.name]))
            for title, command in actions
        ]
        if missing:
            lenses.append(types.CodeLens(rng, types.Command(title=f"{' · '.join(missing)}: no GPU on this machine",
                                                            command="")))
    return lenses
