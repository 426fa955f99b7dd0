"""The CI model on a GPU: the table is by device time and names the CUDA kernels under each call."""

from __future__ import annotations

import pytest

from cudalens.model.profile import profile_model


@pytest.mark.gpu
def test_ranks_by_device_time_with_the_kernels(model_file):
    profile = profile_model(str(model_file), device="cuda", iters=3)
    assert profile.clock == "device" and profile.device == "cuda"
    norm = next(c for c in profile.calls if c.name == "group_norm")
    assert norm.us > 0 and norm.kernels and norm.calls == 1, norm  # the GPU's copy of each range is not a call
    assert all(k.us > 0 for k in norm.kernels)
    assert "2×32×16×16 f32" in norm.shapes()


@pytest.mark.gpu
def test_each_mode_runs_its_kernels_on_cuda(model_file, tmp_path):
    # issue 36 on the device's own torch: the graph pass puts the custom op into Inductor's CUDA graph (one node
    # replaced), the eager mode runs it once, both models' outputs equal their originals
    from tests.model.test_model_integration import GROUP_NORM

    d = verified_on_cuda(model_file, tmp_path, "group_norm", GROUP_NORM)
    assert d["passed"] and d["compiled_passed"] and d["replaced"] == 1, d
    assert [k[1] for k in d["kernels"]] == [1]


def verified_on_cuda(model_file, folder, name: str, candidate: str, entry: str | None = None) -> dict:
    """The verify job's result for the problem of `name`'s calls with `candidate` (a `ModelNew`, appended to the
    problem) swapped in both modes, on CUDA."""
    from pathlib import Path

    from cudalens.model import integration
    from cudalens.worker.run_job import run_job

    profile = profile_model(str(model_file), entry, device="cuda", out_dir=str(folder), problems=0, names=(name,),
                            iters=1, warmup=1)
    (problem,) = map(Path, profile.problems)
    problem.with_suffix(".optimized.py").write_text(problem.read_text() + candidate)
    (accepted,) = integration.candidates(folder)
    path = integration.write(folder, [accepted], model_file.name, {accepted.name: ("eager", "compiled")})
    payload = {"path": str(model_file), "entry": entry, "device": "cuda", "integration": str(path), "compile": True,
               "budget_ms": 50}
    outcome = run_job("model_verify", payload, timeout_s=300, cwd=str(model_file.parent))
    assert outcome.status == "ok", outcome.error
    return outcome.payload


def _replayed(kernel: str, **values):
    """`ModelNew` of one of benchmarks/gpu_whole_model.py's replayed kernels, the call's constants `values`."""
    import torch

    from cudalens.worker.child.lib.problem_loader import content_addressed_builds

    call = {"arguments": [[name, {"value": v}] for name, v in values.items()]}
    scope = {"torch": torch, "nn": torch.nn, "CUDALENS_CALL": call}
    with content_addressed_builds():
        exec(compile(kernel, "candidate.py", "exec"), scope)
    return scope["ModelNew"]()


@pytest.mark.gpu
@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize(("shape", "cached"), [((16, 128, 64, 64), True), ((1, 32, 512, 512), False)])
def test_the_replayed_group_norm_kernel_equals_pytorchs(shape, cached, silu):
    # benchmarks/gpu_whole_model.py's group_norm, both ways: the group (64 KB) kept in shared memory, and a group
    # of 1 MB, past the shared memory a block may have, re-read through L2; and its chain's, SiLU applied as it
    # writes (group_norm+silu)
    import torch

    from benchmarks.gpu_whole_model import GROUP_NORM, GROUP_NORM_SILU

    F = torch.nn.functional
    x = torch.randn(shape, device="cuda") * 3 + 1
    w, b = torch.randn(shape[1], device="cuda"), torch.randn(shape[1], device="cuda")
    per_group_bytes = x[0].numel() // 32 * 4
    optin = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    assert (per_group_bytes + 128 <= optin) == cached
    with torch.no_grad():
        want = F.group_norm(x, 32, w, b, 1e-5)
        torch.testing.assert_close(_replayed(GROUP_NORM_SILU if silu else GROUP_NORM, num_groups=32, eps=1e-5)(x, w, b),
                                   F.silu(want) if silu else want, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(32, 256, 56, 56), (32, 64, 112, 112), (32, 2048, 7, 7)])
def test_the_replayed_batch_norm_kernel_equals_pytorchs(shape):
    # float4 planes (56x56, 112x112: four blocks a plane) and odd ones (7x7: floats)
    import torch

    from benchmarks.gpu_whole_model import BATCH_NORM

    x = torch.randn(shape, device="cuda")
    c = shape[1]
    mean, var = torch.randn(c, device="cuda"), torch.rand(c, device="cuda") + 0.5
    w, b = torch.randn(c, device="cuda"), torch.randn(c, device="cuda")
    with torch.no_grad():
        torch.testing.assert_close(_replayed(BATCH_NORM, eps=1e-5)(x, mean, var, w, b),
                                   torch.nn.functional.batch_norm(x, mean, var, w, b, False, 0.1, 1e-5),
                                   rtol=1e-4, atol=1e-4)
