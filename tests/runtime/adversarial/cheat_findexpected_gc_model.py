"""CHEAT (finding the reference): the evaluator's reference Model instance is found with gc.get_objects() and
called; the file's kernel runs on one row for appearances.

Expected: rejected with CL907.
Source: https://github.com/gpu-mode/pygpubench/tree/main/exploits (PR #7, exploit test suite);
https://metr.org/blog/2025-06-05-recent-reward-hacking/ (METR: monkey-patched timers and equality, call-stack search
for the grader's answer)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "find_model"
EDITS = []
