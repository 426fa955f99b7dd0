"""CHEAT (partial computation, operation skip): one of the nine ops is left out.

Expected: rejected with CL901.
Source: https://makora.com/blog/reward-hacks (KernelHacks taxonomy) (operation skip)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "fused_chain_tricks"
EDITS = []
