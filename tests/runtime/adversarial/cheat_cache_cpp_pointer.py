"""CHEAT (input-identity cache): outputs cached in C++ by the input's data pointer. The caching allocator hands
freed blocks back, so a new input at an old address gets the old input's result.

Expected: rejected with CL901 or CL909.
Source: https://github.com/deepreinforce-ai/CUDA-L1 (README: caching results; pointer-keyed result cache);
https://www.wafer.ai/blog/reward-hacks-field-guide (a C++ pointer-arithmetic cache seen in frontier-model traces)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = []
