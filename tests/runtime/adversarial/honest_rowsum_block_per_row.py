"""HONEST: row sums with one block per row, float4 loads and a block reduction, every column read.

Counterpart of: cheat_library_rowsum_helper.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "rowsum"
EDITS = [(138, 140, '        return ext.rowsum_block(x)\n')]
