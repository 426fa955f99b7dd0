"""The eager swap (issue 36): the one function a kernel replaces is patched where it lives for the length of a
forward, the kernel runs for exactly its verified call and nothing else of the forward is touched. The
"kernels" are plain-torch files, real code run on a CPU."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from cudalens.worker.child.lib import op_calls as calls  # noqa: E402
from cudalens.worker.child.lib.jobkit import load_by_path  # noqa: E402

F = torch.nn.functional

SOFTMAX = '''import torch

class ModelNew(torch.nn.Module):
    def forward(self, input):
        e = torch.exp(input - input.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)
'''
# a candidate that calls the function it replaces: inside the swap it must reach the original, not itself
CALLS_THE_ORIGINAL = '''import torch

class ModelNew(torch.nn.Module):
    def forward(self, input):
        return torch.nn.functional.softmax(input, dim=-1) + 0.0
'''


def recorded(func, *args, **kwargs):
    """The call's arguments as `cudalens model` records them: what `__torch_function__` is handed."""
    seen = []

    class Spy(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, f, types, a=(), kw=None):
            if f is func:
                seen.append(calls.bind(calls.parameter_names(f), a, kw or {}))
            return f(*a, **(kw or {}))

    with Spy():
        func(*args, **kwargs)
    return [[name, calls.describe(v)] for name, v in seen[0]]


def kernel(tmp_path, function: str, arguments, source: str, name: str) -> calls.Kernel:
    (tmp_path / f"{name}.py").write_text(source)
    spec = {"namespace": f"cudalens_eager_test_{name}", "name": name, "candidate": f"{name}.py",
            "function": function, "positional": 1, "arguments": arguments, "modes": ["eager"]}
    return calls.Kernel(spec, tmp_path, load_by_path)


def test_the_verified_call_runs_the_kernel_and_every_other_call_the_original(tmp_path):
    x = torch.randn(4, 16)
    k = kernel(tmp_path, "torch.nn.functional.softmax", recorded(F.softmax, x, dim=-1), SOFTMAX, "ksoftmax_a")
    original, silu = F.softmax, F.silu
    with torch.no_grad(), calls.CallSwap([k]):
        assert F.softmax is not original and F.silu is silu  # one function patched, nothing else
        torch.testing.assert_close(F.softmax(x, dim=-1), torch.softmax(x, -1))  # the model spells out less
        assert (k.hits, k.fallbacks) == (1, 0)
        F.softmax(torch.randn(5, 16), dim=-1)  # another shape
        F.softmax(x, dim=0)  # another dim
        F.softmax(x.t().contiguous().t(), dim=-1)  # other strides
        assert (k.hits, k.fallbacks) == (1, 3)
    assert F.softmax is original


def test_a_call_that_needs_a_gradient_runs_the_original(tmp_path):
    x = torch.randn(4, 16)
    k = kernel(tmp_path, "torch.nn.functional.softmax", recorded(F.softmax, x, dim=-1), SOFTMAX, "ksoftmax_b")
    needs = x.clone().requires_grad_()
    with calls.CallSwap([k]):
        F.softmax(needs, dim=-1).sum().backward()  # the kernel has no backward: PyTorch's op ran
        assert k.hits == 0 and needs.grad is not None
        with torch.no_grad():
            F.softmax(needs, dim=-1)
        assert k.hits == 1


def test_a_tensor_method_is_swapped_and_the_class_restored(tmp_path):
    x = torch.randn(4, 16)
    k = kernel(tmp_path, "torch.Tensor.softmax", recorded(torch.Tensor.softmax, x, -1), SOFTMAX, "ksoftmax_c")
    assert "softmax" not in vars(torch.Tensor)  # TensorBase's: the patch goes on torch.Tensor, then away
    with torch.no_grad(), calls.CallSwap([k]):
        torch.testing.assert_close(x.softmax(-1), torch.softmax(x, -1))
    assert k.hits == 1 and "softmax" not in vars(torch.Tensor)


def test_a_kernel_calling_the_original_does_not_call_itself(tmp_path):
    x = torch.randn(4, 16)
    k = kernel(tmp_path, "torch.nn.functional.softmax", recorded(F.softmax, x, dim=-1), CALLS_THE_ORIGINAL,
               "ksoftmax_d")
    swap = calls.CallSwap([k])
    with torch.no_grad(), swap, swap:  # entered twice: patched once, restored once
        torch.testing.assert_close(F.softmax(x, dim=-1), torch.softmax(x, -1))
    assert (k.hits, k.fallbacks) == (1, 0) and F.softmax.__module__ == "torch.nn.functional"


def test_a_dry_swap_checks_and_runs_the_original(tmp_path):
    x = torch.randn(4, 16)
    k = kernel(tmp_path, "torch.nn.functional.softmax", recorded(F.softmax, x, dim=-1), SOFTMAX, "ksoftmax_e")
    with torch.no_grad(), calls.CallSwap([k], dry=True):
        assert torch.equal(F.softmax(x, dim=-1), torch.softmax(x, -1))
    assert (k.hits, k.fallbacks) == (0, 0) and k._model is None  # the candidate never even loaded
