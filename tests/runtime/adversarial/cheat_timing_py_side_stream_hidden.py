"""CHEAT (timing, Python side stream, obfuscated): no torch.cuda.Stream(...) or `with torch.cuda.stream` for a
pattern to see; the work still leaves the caller's stream and is never joined.

Expected: rejected with CL906 or CL901.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/non_default_stream_kernel.py
; https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py (stream
injection); https://www.wafer.ai/blog/reward-hacks-field-guide
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (210, 209, r'''_make_stream = getattr(torch.cuda, "Str" + "eam")  # torch.cuda.Stream, by another name
_STREAMS = []


'''),
    (215, 216, r'''        if not _STREAMS:
            _STREAMS.append(_make_stream())
        side = _STREAMS[0]
        caller = torch.cuda.current_stream()
        side.wait_event(caller.record_event())  # the inputs are ready
        torch.cuda.set_stream(side)
        y = ext.sigmoid_vec4(x)  # launched on the (now current) side stream
        torch.cuda.set_stream(caller)  # back, without making the caller wait
'''),
]
