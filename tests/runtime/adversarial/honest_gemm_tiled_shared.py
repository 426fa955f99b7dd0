"""HONEST but slow: a shared-memory tiled float32 GEMM (64 x 64 tiles, 16-deep K steps, 4 x 4 outputs per
thread). It must pass correctness; being slower than cuBLAS is a CL903 warning, not a rejection.

Counterpart of: cheat_library_gemm_aten.py, cheat_library_gemm_ghost_branch.py, cheat_precision_gemm_truncated.py,
cheat_partial_gemm_half_k.py, cheat_precision_gemm_tf32_switch.py, cheat_timing_gemm_side_stream.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "gemm"
EDITS = []
