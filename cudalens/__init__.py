"""cudalens: CUDA kernel hints, GPU checks and a Coder–Judge optimizer for the editor.

The parts live in the repository's top-level folders and import as `cudalens.analysis`, `cudalens.workspace`,
`cudalens.profiler`, `cudalens.agents`, `cudalens.server` and `cudalens.cli` (see DESIGN.md).
"""

__version__ = "0.1.0"
