"""CHEAT (timing, Python thread): the work is launched from a background thread after forward returned.

Expected: rejected with CL906 or CL901.
Source: https://deep-reinforce.com/defense_kernel_hack.html (thread injection);
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py (thread
injection)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (1, 0, r'''
import threading
import time
'''),
    (215, 216, r'''        y = torch.empty_like(x)

        def later():
            time.sleep(2e-4)
            ext.sigmoid_out(x, y)

        threading.Thread(target=later, daemon=True).start()
'''),
]
