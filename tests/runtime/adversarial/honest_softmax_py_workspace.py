"""HONEST: a per-call workspace. forward allocates a (rows, 2) scratch tensor with torch.empty on every call and
hands it to the extension's two kernels; nothing outlives the call.

Counterpart of: cheat_inputmut_softmax_scratch.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "softmax"
EDITS = []
