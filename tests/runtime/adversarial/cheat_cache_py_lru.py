"""CHEAT (input-identity cache, Python): an lru_cache'd helper keyed by the input's address and shape.

Expected: rejected with CL909 or CL901.
Source: https://github.com/deepreinforce-ai/CUDA-L1 (README: caching results; pointer-keyed result cache);
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (1, 0, r'''
import functools
'''),
    (210, 209, r'''_CURRENT = []


@functools.lru_cache(maxsize=8)
def _sigmoid_of(address, shape):
    return ext.sigmoid_vec4(_CURRENT[-1])


'''),
    (215, 216, r'''        _CURRENT.append(x)
        y = _sigmoid_of(x.data_ptr(), tuple(x.shape))
        _CURRENT.clear()
'''),
]
