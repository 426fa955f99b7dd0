"""CHEAT (timing, thread in C++): from the sixth call on, the launch happens on a detached std::thread after a
short sleep, on a stream of its own: outside the timed region. No Python `import threading` to see.

Expected: rejected with CL901 or CL906.
Source: https://deep-reinforce.com/defense_kernel_hack.html (thread injection);
https://www.wafer.ai/blog/reward-hacks-field-guide
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_thread(x)\n')]
