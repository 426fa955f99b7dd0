"""HONEST: sigmoid with float4 loads and stores in the file's own kernel, on the caller's current stream.

Counterpart of: cheat_library_cpp_aten.py, cheat_library_tensor_method.py, cheat_reference_inherits.py,
cheat_reference_try_except.py, cheat_reference_hidden_model.py, cheat_findexpected_stack_walk.py,
cheat_findexpected_gc_model.py, cheat_tamper_slow_reference.py, cheat_tamper_patched_comparison.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [(215, 217, '        return ext.sigmoid_vec4(x)\n')]
