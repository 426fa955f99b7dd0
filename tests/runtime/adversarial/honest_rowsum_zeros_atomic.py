"""HONEST: a kernel plus an honest helper launch. torch.zeros fills the (8192,) output (a tiny fill kernel) and
the file's kernel adds four partial sums per row into it with atomicAdd.

Counterpart of: cheat_library_rowsum_helper.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "rowsum"
EDITS = []
