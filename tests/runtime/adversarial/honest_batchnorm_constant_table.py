"""HONEST: state kept across calls, legitimately. Batch norm in inference mode folds into a per-channel scale
and shift; ModelNew computes that table once in __init__ from the parameters (the init inputs, not any
output) and each call runs one fused kernel over the whole input.

Counterpart of: cheat_cache_cpp_pointer.py, cheat_callcount_replay_last.py, cheat_timing_py_graph_replay.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "channel_affine"
EDITS = []
