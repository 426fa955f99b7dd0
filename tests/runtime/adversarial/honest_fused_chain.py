"""HONEST: fusion. The reference launches nine element-wise kernels, each a full pass over 128 MB; this file
computes the chain in registers in one float32 kernel (float4 loads). Several times faster than eager
PyTorch and still above the time any kernel needs to read x and write y once.

Counterpart of: cheat_precision_fp16_chain.py, cheat_partial_skip_clamp.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "fused_chain"
EDITS = []
