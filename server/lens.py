"""Code lenses above each kernel: a one-line summary, then Run tests · Profile · Optimize."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from lsprotocol import types

from cudalens.analysis.api import KernelInfo
from cudalens.analysis.findings import Finding
from cudalens.server.commands import OPTIMIZE, PROFILE, RUN_TESTS
from cudalens.server.convert import Positions

_ACTIONS = (("▶ Run tests", RUN_TESTS), ("Profile", PROFILE), ("Optimize", OPTIMIZE))


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


def kernel_lenses(
    uri: str, kernels: Sequence[KernelInfo], findings: Sequence[Finding], pos: Positions, badge: str | None = None,
    runs: bool = True,
) -> list[types.CodeLens]:
    """`badge`: the last run's verdict (`✓ 5/5 · 1.8× vs PyTorch`), shown on every kernel of the file. `runs`:
    the buttons that run something (off in an untrusted workspace, where they would only be refused)."""
    lenses = []
    for kernel in kernels:
        at = pos.to_lsp(kernel.name_span.line, 1)
        rng = types.Range(at, at)
        # An empty command id makes an inert lens: the summary is text, not a button.
        lenses.append(types.CodeLens(rng, types.Command(title=lens_title(kernel, findings, badge), command="")))
        lenses += [
            types.CodeLens(rng, types.Command(title=title, command=command, arguments=[uri, kernel.name]))
            for title, command in (_ACTIONS if runs else ())
        ]
    return lenses
