"""cudalens: CUDA kernel hints, GPU checks and a Coder–Judge optimizer for the editor.

The parts live in the repository's top-level folders and import as `cudalens.analysis`, `cudalens.workspace`,
`cudalens.profiler`, `cudalens.agents`, `cudalens.server` and `cudalens.cli` (see DESIGN.md).
"""

__version__ = "0.1.0"

# The parts, each a top-level folder of the repository installed as `cudalens.<part>` (setup.py maps them; a test
# checks its list is this one).
PARTS = ("analysis", "workspace", "profiler", "worker", "model", "agents", "server", "cli")
