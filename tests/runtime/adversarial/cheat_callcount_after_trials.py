"""CHEAT (call-count): `static long calls` in the extension's C++; the first five calls compute, every later call
returns uninitialised memory. Invisible to any Python check.

Expected: rejected with CL901 or CL906.
Source: https://github.com/karpathy/llm.c/pull/852 (a kernel correct for its first calls, then wrong);
gpu-mode/kernelbot PR #501 (fresh inputs for every timed call; result replay for repeated inputs)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_count(x)\n')]
