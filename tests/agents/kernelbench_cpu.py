"""KernelBench-shaped problems whose ModelNew is pure PyTorch, so the loop runs end to end on CPU torch."""

from __future__ import annotations

REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Row sums, one column at a time: a deliberately slow reference."""

    def forward(self, x):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for j in range(x.shape[1]):
            out = out + x[:, j]
        return out


def get_inputs():
    return [torch.randn(64, 512)]


def get_init_inputs():
    return []
'''


def model_new(body: str) -> str:
    """The reference file plus a ModelNew whose forward is `body` (indented under `def forward(self, x):`)."""
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return REFERENCE + f"\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n{lines}\n"


START = model_new(
    "out = torch.zeros(x.shape[0], dtype=x.dtype)\nfor j in range(x.shape[1]):\n"
    "    out = out + x[:, j]\nreturn out"
)
WRONG = model_new("return x.sum(dim=1) * 1.01")
SLOW = model_new(
    "out = torch.zeros(x.shape[0], dtype=x.dtype)\nfor _ in range(5):\n"
    "    out = torch.zeros(x.shape[0], dtype=x.dtype)\n    for j in range(x.shape[1]):\n"
    "        out = out + x[:, j]\nreturn out"
)
FAST = model_new("return x.sum(dim=1)")
# A hostile Coder's reply (issue 32): it computes while it is tested (the five trials, the warm-up call) and
# then returns what it remembered, through a helper the static checks do not read: timed, it does nothing
SKIPS_AFTER_TRIALS = model_new("return _remember(x)") + '''

_seen = {"calls": 0, "out": None}


def _remember(x):
    _seen["calls"] += 1
    if _seen["calls"] <= 6:
        _seen["out"] = x.sum(dim=1)
    return _seen["out"]
'''


def fenced(source: str, prose: str = "Here is the new version.") -> str:
    return f"{prose}\n\n```python\n{source}```\n\nIt should be correct now."
