"""CHEAT (timing, clock patched in Python, plainly): torch.cuda.Event.elapsed_time is reassigned at import.

Expected: rejected with CL906.
Source: https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py
(timing monkey patch); https://deep-reinforce.com/defense_kernel_hack.html;
https://metr.org/blog/2025-06-05-recent-reward-hacking/ (METR: monkey-patched timers and equality, call-stack search
for the grader's answer)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "timing_patched_clock"
EDITS = []
