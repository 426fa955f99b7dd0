"""The call signatures everything in `cudalens model` rests on: naming a torch function, binding its arguments,
and the guard that lets a kernel run only on the arguments it was verified on."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from cudalens.worker.child.lib import op_calls as calls  # noqa: E402
from cudalens.worker.child.lib import problem_render as render  # noqa: E402

F = torch.nn.functional


def verified(func, *args, **kwargs):
    bound = calls.bind(calls.parameter_names(func), args, kwargs)
    return [[name, calls.describe(v)] for name, v in bound]


@pytest.mark.parametrize(("func", "path"), [
    (F.group_norm, "torch.nn.functional.group_norm"),
    (F.conv2d, "torch.nn.functional.conv2d"),
    (torch.Tensor.softmax, "torch.Tensor.softmax"),
    (torch.matmul, "torch.matmul"),
    (torch.Tensor.shape.__get__, None),  # metadata: no kernel, no row
])
def test_function_paths_resolve_to_the_same_function(func, path):
    assert calls.function_path(func) == path
    if path:
        assert calls.resolve(path) is func


def test_the_guard_takes_exactly_the_verified_arguments():
    x, w, b = torch.randn(2, 32, 4, 4), torch.randn(32), torch.randn(32)
    want = verified(F.group_norm, x, 8, w, b, 1e-5)
    names = calls.parameter_names(F.group_norm)

    def ok(*args, **kwargs):
        return calls.matches(calls.bind(names, args, kwargs), want)

    assert ok(torch.randn(2, 32, 4, 4), 8, w, b, 1e-5)  # other values, same signature
    assert not ok(torch.randn(3, 32, 4, 4), 8, w, b, 1e-5)  # another batch
    assert not ok(torch.randn(2, 32, 4, 4).half(), 8, w.half(), b.half(), 1e-5)  # another dtype
    assert not ok(torch.randn(2, 4, 4, 32).permute(0, 3, 1, 2), 8, w, b, 1e-5)  # channels-last strides
    assert not ok(x, 4, w, b, 1e-5)  # another group count
    assert not ok(x, 8, w, None, 1e-5)  # no bias
    assert ok(x, 8, weight=w, bias=b, eps=1e-5)  # the same call by keyword: bound by parameter name


def test_call_args_rebuild_the_call_with_other_tensors():
    x, w, b = torch.randn(2, 32, 4, 4), torch.randn(32), torch.randn(32)
    want = verified(F.group_norm, x, 8, weight=w, bias=b, eps=1e-5)
    args, kwargs = calls.call_args(want, 1, [x, w, b])
    assert torch.equal(F.group_norm(*args, **kwargs), F.group_norm(x, 8, w, b, 1e-5))


def test_problem_text_names_inputs_and_writes_constants():
    arguments = verified(torch.cat, [torch.randn(2), torch.randn(3)], 0)
    names = render.input_names(arguments)
    assert names == ["arg00", "arg01"]
    assert render.call_text("torch.cat", arguments, 2, names) == "torch.cat([arg00, arg01], 0)"
    arguments = [["input", {"tensor": {"shape": [1], "dtype": "float32", "stride": [1], "device": "cpu"}}],
                 ["lambda", {"tensor": {"shape": [1], "dtype": "float32", "stride": [1], "device": "cpu"}}],
                 ["output_size", {"value": [1, 1]}], ["dtype", {"dtype": "float16"}]]
    assert render.input_names(arguments) == ["input", "lambda_"]
    assert render.call_text("f", arguments, 1, ["input", "lambda_"]) == \
        "f(input, lambda=lambda_, output_size=(1, 1), dtype=torch.float16)"


def test_values_a_file_cannot_write_are_opaque():
    assert calls.describe(float("nan")) == {"opaque": "float"}
    assert calls.describe(float("inf")) == {"opaque": "float"}
    assert calls.describe(torch.device("cpu")) == {"opaque": "device"}
    assert calls.describe((1, 2)) == {"value": [1, 2]}


def test_a_graph_nodes_arguments_are_completed_with_the_defaults_the_eager_call_spelled_out():
    # F.softmax hands _stacklevel and dtype to __torch_function__ (the problem's signature has them); Dynamo's
    # node for the same call has only `dim`
    x = torch.randn(2, 8)
    seen_in_eager = []

    class Spy(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is F.softmax:
                seen_in_eager.append(calls.bind(calls.parameter_names(func), args, kwargs or {}))
            return func(*args, **(kwargs or {}))

    with Spy():
        F.softmax(x, dim=-1)
    (bound,) = seen_in_eager
    arguments = [[name, calls.describe(v)] for name, v in bound]
    assert [name for name, _ in arguments] == ["input", "dim", "_stacklevel", "dtype"]
    completed = calls.with_defaults([("input", x), ("dim", -1)], arguments, F.softmax)
    assert completed is not None and calls.matches(completed, arguments)
    assert not calls.matches(calls.with_defaults([("input", x)], arguments, F.softmax), arguments)  # dim=None
    assert calls.with_defaults([("dim", -1)], arguments, F.softmax) is None  # `input` has no default
    assert calls.with_defaults([("input", x), ("dim", -1), ("other", 1)], arguments, F.softmax) is None
    assert not calls.matches(calls.with_defaults([("input", x), ("dim", 0)], arguments, F.softmax), arguments)
