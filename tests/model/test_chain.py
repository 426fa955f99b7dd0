"""A producer and its one elementwise consumer as one problem and one kernel (issue 36): `group_norm` → `silu`
found in a diffusion-style block's traced calls, its problem's reference the model's two calls, and the pair's
kernel swapped in — eager and compiled — only where Dynamo's graph shows the same pair. The "kernel" is plain
torch, real code standing in for a CUDA kernel on a machine without a GPU."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from cudalens.model import integration  # noqa: E402
from cudalens.model.integration import candidates  # noqa: E402
from cudalens.model.profile import profile_model, render_table  # noqa: E402
from tests.model.test_model_integration import GROUP_NORM, _import, verify_job  # noqa: E402

BLOCK = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock(nn.Module):
    """A diffusion U-Net's residual block: group_norm -> SiLU -> conv, twice, and the skip."""

    def __init__(self, channels=32, groups=8, leak=False, act=F.silu):
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(groups, channels), nn.GroupNorm(groups, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.leak, self.act = leak, act

    def forward(self, x):
        h = self.conv1(self.act(self.norm1(x)))
        g = self.norm2(h)
        s = self.act(g)
        if self.leak:  # group_norm's output read twice: no chain
            s = s + g
        return x + self.conv2(s)


def model_and_inputs():
    return ResBlock(), [torch.randn(2, 32, 16, 16)]


def leaky():
    return ResBlock(leak=True), [torch.randn(2, 32, 16, 16)]


def relu():
    return ResBlock(act=F.relu), [torch.randn(2, 32, 16, 16)]


def in_place():
    """group_norm's output made positive in place, then the SiLU: the pair is add_ -> silu, which writes."""

    class Shifted(ResBlock):
        def forward(self, x):
            g = self.norm1(x)
            g.add_(1)
            return x + F.silu(g)

    return Shifted(), [torch.randn(2, 32, 16, 16)]


def returned():
    """group_norm's output also leaves the forward: no chain either."""

    class Both(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.GroupNorm(8, 32)

        def forward(self, x):
            g = self.norm(x)
            return F.silu(g), g

    return Both(), [torch.randn(2, 32, 16, 16)]
'''

# group_norm in plain torch (the stand-in for a CUDA kernel), the SiLU after it in the same function
FUSED = GROUP_NORM + '''

_GROUP_NORM = ModelNew


class ModelNew(_GROUP_NORM):
    def forward(self, input, weight, bias):
        return torch.nn.functional.silu(super().forward(input, weight, bias))
'''


@pytest.fixture(scope="module")
def block(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("chain") / "resblock.py"
    path.write_text(BLOCK, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def profiled(block):
    out = block.parent / "problems"
    profile = profile_model(str(block), device="cpu", out_dir=str(out), problems=0, names=("group_norm+silu",),
                            iters=1, warmup=1)
    return profile, out


def test_the_pair_is_found_and_gets_one_problem(profiled):
    profile, _ = profiled
    (chain,) = [c for c in profile.chains if c.name == "group_norm+silu"]
    assert chain.calls == 2 and chain.input == "input"  # norm1 -> silu and norm2 -> silu: one signature pair
    assert {c.id: c.name for c in profile.calls}[chain.producer] == "group_norm"
    assert "chain group_norm+silu (norm1)" in render_table(profile)
    (problem,) = profile.problems
    assert Path(problem).name.startswith("group_norm_silu_")


@pytest.mark.parametrize("entry", ["leaky", "returned", "in_place"])
def test_no_pair_where_the_output_has_another_reader(block, entry):
    profile = profile_model(str(block), entry, device="cpu", iters=1, warmup=1)
    pairs = [c.calls for c in profile.chains if c.name == "group_norm+silu"]
    # leaky: norm1's still is one, once a forward; norm2's output is read twice
    assert pairs == ([1] if entry == "leaky" else [])
    assert not [c for c in profile.chains if c.name.startswith("add_")]  # a call that writes is no producer


def test_the_problems_reference_is_the_models_two_calls(profiled, block):
    _, out = profiled
    problem = next(p for p in out.glob("group_norm_silu_*.py") if not p.name.endswith(".optimized.py"))
    text = problem.read_text()
    assert "produced = torch.nn.functional.group_norm(input, 8, weight=weight, bias=bias, eps=1e-05)" in text
    assert "return torch.nn.functional.silu(produced, inplace=False)" in text
    module = _import(problem, "chain_problem_under_test")
    torch.manual_seed(0)
    model, (x,) = _import(block, "resblock_for_reference").model_and_inputs()
    recorded = module.get_recorded_inputs()
    assert torch.equal(recorded[0], x)  # the model's own input to norm1, the first such call
    with torch.no_grad():
        torch.testing.assert_close(module.Model()(*recorded), torch.nn.functional.silu(model.norm1(x)),
                                   rtol=0, atol=0)
        assert module.Model()(*module.get_inputs()).shape == x.shape  # random inputs, the model's weights


@pytest.fixture(scope="module")
def kernels(profiled, tmp_path_factory):
    """The integration module for the pair's plain-torch kernel, swapped in both modes."""
    _, folder = profiled
    out = tmp_path_factory.mktemp("chain_swapped")
    source = next(p for p in folder.glob("group_norm_silu_*.py") if not p.name.endswith(".optimized.py"))
    problem = out / source.name
    problem.write_text(source.read_text())
    shutil.copy(source.with_suffix(".pt"), out)
    problem.with_suffix(".optimized.py").write_text(source.read_text() + FUSED)
    (accepted,) = candidates(out)
    assert accepted.op == "group_norm+silu"
    path = integration.write(out, [accepted], "resblock.py", {accepted.name: ("eager", "compiled")})
    return _import(path, "chain_kernels_under_test")


def _model(block, entry="model_and_inputs"):
    torch.manual_seed(0)
    model, (x,) = getattr(_import(block, f"resblock_{entry}"), entry)()
    return model.eval(), x


def test_eager_swap_runs_the_pair_kernel_and_nothing_else_changes(kernels, block):
    (kernel,) = kernels.KERNELS
    model, x = _model(block)
    fast = kernels.swap(model)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.testing.assert_close(fast(x), model(x), rtol=1e-5, atol=1e-5)
        assert kernel.hits == 2  # both pairs of the block
        torch.testing.assert_close(fast(x + 1), model(x + 1), rtol=1e-5, atol=1e-5)
        assert kernel.hits == 4
        bigger = torch.randn(3, 32, 16, 16)  # another batch: another graph, which matches nothing
        assert torch.equal(fast(bigger), model(bigger)) and kernel.hits == 4
    assert "graph" not in dict(fast.named_children())  # the model's parameters once
    torch._dynamo.reset()


def test_the_pair_kernel_is_not_swapped_where_the_output_has_another_reader(kernels, block):
    (kernel,) = kernels.KERNELS
    model, x = _model(block, "leaky")
    torch._dynamo.reset()
    hits = kernel.hits
    with torch.no_grad():
        torch.testing.assert_close(kernels.swap(model)(x), model(x), rtol=1e-5, atol=1e-5)
    assert kernel.hits == hits + 1  # norm1's pair only: norm2's output is also added to the SiLU's
    model, x = _model(block, "relu")  # another consumer
    torch._dynamo.reset()
    with torch.no_grad():
        assert torch.equal(kernels.swap(model)(x), model(x)) and kernel.hits == hits + 1
    model, x = _model(block, "returned")
    torch._dynamo.reset()
    with torch.no_grad():
        got, want = kernels.swap(model)(x), model(x)
    assert all(torch.equal(a, b) for a, b in zip(got, want, strict=True)) and kernel.hits == hits + 1
    with torch.enable_grad():  # a gradient is needed: the graph keeps PyTorch's ops (a kernel has no backward)
        torch._dynamo.reset()
        model, x = _model(block)
        kernels.swap(model)(x).sum().backward()
    assert kernel.hits == hits + 1 and model.norm1.weight.grad is not None
    torch._dynamo.reset()


def test_compiled_places_the_pair_into_the_graph(kernels, block):
    model, x = _model(block)
    traced: list[str] = []
    swap = kernels.GRAPH_PASS

    def backend(graph, example_inputs):  # what Inductor does with its pre-grad pass, then no compiler
        swap(graph.graph)
        graph.recompile()
        traced.extend(str(node.target) for node in graph.graph.nodes)
        return graph.forward

    torch._dynamo.reset()
    replaced = swap.replaced
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend=backend)(x), model(x), rtol=1e-5, atol=1e-5)
    assert swap.replaced == replaced + 2
    assert not any("group_norm" in t and "kgroup_norm" not in t for t in traced), traced
    assert not any("silu" in t and "kgroup_norm" not in t for t in traced), traced
    with torch.no_grad():
        torch.testing.assert_close(kernels.compiled(model)(x), model(x), rtol=1e-4, atol=1e-4)  # Inductor's
    torch._dynamo.reset()


def test_the_pairs_custom_op_passes_opcheck(kernels, block):
    (kernel,) = kernels.KERNELS
    model, x = _model(block)
    torch.library.opcheck(kernel.op, (x, model.norm1.weight.detach(), model.norm1.bias.detach()))
    with torch.no_grad():
        torch.testing.assert_close(kernel.op(x, model.norm1.weight, model.norm1.bias),
                                   torch.nn.functional.silu(model.norm1(x)), rtol=1e-5, atol=1e-5)


def test_the_verify_job_times_the_pair_in_both_modes(kernels, block):
    d = verify_job(kernels, block)
    assert d["passed"] and d["compiled_passed"] and d["replaced"] == 2, d
    assert [k[1] for k in d["kernels"]] == [2]
    assert d["mode_only"]["samples_ms"]


@pytest.mark.gpu
def test_each_mode_runs_the_pair_kernel_on_cuda(block, tmp_path):
    # on the device's torch: the pair's custom op in Inductor's CUDA graph, and Dynamo's graph in eager mode
    from tests.model.test_model_gpu import verified_on_cuda

    d = verified_on_cuda(block, tmp_path, "group_norm+silu", FUSED)
    assert d["passed"] and d["compiled_passed"] and d["replaced"] == 2, d
    assert [k[1] for k in d["kernels"]] == [2]
