"""HONEST: a side stream used correctly. The extension launches on a non-blocking stream of its own after an
event from the caller's stream, then makes the caller's stream wait for the kernel: the timer's end event
comes after the work.

Counterpart of: cheat_timing_cpp_side_stream.py, cheat_timing_py_side_stream_hidden.py, cheat_timing_cpp_thread.py,
cheat_timing_gemm_side_stream.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [(215, 217, '        return ext.sigmoid_joined_stream(x)\n')]
