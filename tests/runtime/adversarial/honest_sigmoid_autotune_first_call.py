"""HONEST: behaviour that depends on the call, done right: the first call autotunes the block size (each
candidate launch computes the whole result, timed with events) and later calls reuse the choice. Only the
launch geometry is kept across calls, never a result.

Counterpart of: cheat_callcount_after_trials.py, cheat_callcount_timing_burst.py, cheat_callcount_replay_last.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [(215, 217, '        return ext.sigmoid_autotuned(x)\n')]
