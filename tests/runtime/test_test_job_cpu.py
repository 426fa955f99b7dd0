"""The `test` job end to end on CPU: files on disk, loaded as the worker would."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


def test_kernelbench_single_file_passes(test_job, data_dir):
    out = test_job.run({"path": str(data_dir / "kb_relu_right.py"), "device": "cpu"})
    assert out["error"] is None
    assert out["test"]["status"] == "passed"
    assert len(out["test"]["trials"]) == 5


def test_solution_with_reference_directive_fails(test_job, data_dir):
    out = test_job.run({"path": str(data_dir / "kb_relu_solution_only.py"), "device": "cpu"})
    assert out["test"]["status"] == "failed"
    assert "first at" in out["test"]["message"]


def test_timing_after_pass(test_job, data_dir):
    out = test_job.run({"path": str(data_dir / "kb_relu_right.py"), "device": "cpu", "time": True, "budget_ms": 5})
    assert out["timing"]["candidate"]["samples_ms"]
    assert out["timing"]["speedup"] > 0
    # where the job's time went, for the server's log (a first save's test on a fresh GPU is mostly first uses)
    assert set(out["seconds"]) == {"load", "check", "timing"} and all(v >= 0 for v in out["seconds"].values())


def test_missing_file_is_one_line_error(test_job, data_dir):
    out = test_job.run({"path": str(data_dir / "nope.py"), "device": "cpu"})
    assert out["test"]["status"] == "error"
    assert "no such file" in out["error"]


def test_problem_file_without_modelnew(test_job, data_dir):
    out = test_job.run({"path": str(data_dir / "kb_relu_problem.py"), "device": "cpu"})
    assert "no ModelNew" in out["error"]


def test_cu_without_reference_says_how(test_job, tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k(float* x) { x[threadIdx.x] = 0; }\n")
    out = test_job.run({"path": str(cu), "device": "cpu"})
    assert "k_ref.py" in out["error"]


def test_host_function_parsing():
    from cudalens.worker.child.lib import problem_loader as loader

    text = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {}
__device__
float helper(float x) { return x; }
torch::Tensor relu_cuda(torch::Tensor x,
                        double alpha) {
    return x;
}
std::vector<torch::Tensor> two(torch::Tensor a) { return {a, a}; }
void fill(torch::Tensor out, double value = 1.0, int64_t n = 4) {}
"""
    assert loader.host_functions(text) == [
        ("relu_cuda", "torch::Tensor relu_cuda(torch::Tensor x, double alpha);"),
        ("two", "std::vector<torch::Tensor> two(torch::Tensor a);"),
        ("fill", "void fill(torch::Tensor out, double value, int64_t n);"),
    ]
    assert loader.kernel_names(text) == ["relu_kernel"]


def test_reference_discovery(tmp_path):
    from cudalens.worker.child.lib import problem_loader as loader

    cu = tmp_path / "scale.cu"
    cu.write_text("// x\n")
    assert loader.reference_for(cu, "", None) is None
    (tmp_path / "scale_ref.py").write_text("")
    assert loader.reference_for(cu, "", None) == (tmp_path / "scale_ref.py").resolve()
    assert loader.reference_for(cu, "// cudalens: reference=other.py\n", None) == (tmp_path / "other.py").resolve()


def test_profile_target_and_prebuild_run_as_processes(data_dir, tmp_path):
    import json
    import subprocess
    import sys

    from cudalens.profiler.prebuild import prebuild
    from cudalens.worker.jobs import child_command

    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"path": str(data_dir / "kb_relu_right.py"), "device": "cpu", "reps": 2}))
    proc = subprocess.run(child_command(sys.executable, "jobs.profile_target", str(payload)), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    payload.write_text(json.dumps({"path": str(data_dir / "kb_relu_problem.py"), "device": "cpu"}))
    proc = subprocess.run(child_command(sys.executable, "jobs.profile_target", str(payload)), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "no ModelNew" in proc.stderr
    [build] = prebuild([str(data_dir / "kb_relu_right.py")])
    assert build.ok, build.message


def test_a_build_ahead_makes_no_inputs_and_runs_nothing(tmp_path):
    """prebuild (reps 0) builds and stops: a search builds candidates ahead while its GPU times another one, so
    a build ahead must not put inputs or a model on that GPU. Here inputs that cannot be made do not fail it."""
    from cudalens.profiler.prebuild import prebuild

    path = tmp_path / "model.py"
    path.write_text(
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n    def forward(self, x):\n        return x\n\n"
        "class ModelNew(Model):\n    pass\n\n"
        "def get_inputs():\n    raise RuntimeError('inputs were made')\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    [build] = prebuild([str(path)])
    assert build.ok, build.message
    import json
    import subprocess
    import sys

    from cudalens.worker.jobs import child_command

    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"path": str(path), "device": "cpu", "reps": 1}))
    proc = subprocess.run(child_command(sys.executable, "jobs.profile_target", str(payload)), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1 and "inputs were made" in proc.stderr
