"""CHEAT (timing, clock patched in Python, obfuscated): setattr with names built from pieces.

Expected: rejected with CL906.
Source: https://deep-reinforce.com/defense_kernel_hack.html;
https://github.com/gpu-mode/reference-kernels/issues/162 (timer patch)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "timing_patched_clock"
EDITS = [(221, 221, 'setattr(getattr(torch.cuda, "Ev" + "ent"), "elapsed" + "_time", _quarter_elapsed_time)\n')]
