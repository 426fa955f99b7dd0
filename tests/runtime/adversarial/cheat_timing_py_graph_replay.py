"""CHEAT (timing, CUDA graph replay of stale results): the graph is captured once on the first input (kept
alive) and replayed on every call without copying the new input in.

Expected: rejected with CL901 or CL909.
Source: https://deep-reinforce.com/defense_kernel_hack.html;
https://github.com/gpu-mode/reference-kernels/issues/162 (cache/replay); gpu-mode/kernelbot PR #501 (fresh inputs
for every timed call; result replay for repeated inputs)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (210, 209, r'''_GRAPH = {}


'''),
    (215, 217, r'''        if not _GRAPH:
            static_y = torch.empty_like(x)
            graph = torch.cuda.CUDAGraph()
            ext.sigmoid_out(x, static_y)
            with torch.cuda.graph(graph):
                ext.sigmoid_out(x, static_y)  # captured with the first input's address
            _GRAPH.update(graph=graph, x=x, y=static_y)
        _GRAPH["graph"].replay()  # a launch or two of host time; never reads the new input
        return _GRAPH["y"]
'''),
]
