"""CHEAT (partial computation): right on the first rows a spot check would print; the rest is never written.

Expected: rejected with CL901 or CL906.
Source: https://www.wafer.ai/blog/reward-hacks-field-guide (returns garbage); https://makora.com/blog/reward-hacks
(KernelHacks taxonomy) (operation skip)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_first_rows(x)\n')]
