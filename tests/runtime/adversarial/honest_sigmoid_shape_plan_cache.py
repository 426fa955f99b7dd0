"""HONEST: a cache that is allowed: launch plans keyed by the input's element count (its shape), held in a C++
static map. No address, no contents, no output is remembered; every call computes.

Counterpart of: cheat_cache_cpp_pointer.py, cheat_cache_py_dataptr.py, cheat_cache_py_lru.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [(215, 217, '        return ext.sigmoid_planned(x)\n')]
