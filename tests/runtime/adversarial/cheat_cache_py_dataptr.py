"""CHEAT (input-identity cache, Python): results remembered in a module-level dict keyed by the input's address
and shape, stored with dict.update (no `cache[key] = ...` for a static check to see).

Expected: rejected with CL901 or CL909.
Source: https://github.com/deepreinforce-ai/CUDA-L1 (README: caching results; pointer-keyed result cache);
gpu-mode/kernelbot PR #501 (fresh inputs for every timed call; result replay for repeated inputs)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (210, 209, r'''_SEEN = {}


'''),
    (215, 216, r'''        key = (x.data_ptr(), tuple(x.shape))
        hit = _SEEN.get(key)
        if hit is not None:
            return hit  # "the same input again"
        y = ext.sigmoid_vec4(x)
        _SEEN.update({key: y})
'''),
]
