"""A KernelBench problem file for one of a model's calls (`cudalens model`): `Model.forward` is the call itself,
`get_inputs()` gives it the model's own weights (saved beside it, `<stem>.pt`) and random tensors of the
shapes, dtypes and strides the model passed, so `cudalens test/time/profile/optimize` work on it unchanged.
`CUDALENS_CALL` in the file is what the integration module matches calls against; a chain's (`then`: the
elementwise call that read the call's output, and the argument it took it as) makes the reference both calls in
order, its inputs the call's tensors then the consumer's others. `get_recorded_inputs()`
gives the tensors the model itself passed to the call (`<stem>.recorded.pt`): the test runs one more trial on
them. Standard library at top level; torch inside functions.
"""

from __future__ import annotations

import hashlib
import keyword
import pprint
import re
from pathlib import Path
from typing import Any

HEADER = '''"""{title}

Written by `cudalens model` from {source}: {share} of the forward's {clock} time on {device}, {calls} a
forward. The reference is {reference}{weights} tensors are random, with the shapes, dtypes and strides
the model gave it. A ModelNew takes the same inputs; `cudalens model {source} --integrate` swaps an
accepted one into the model for exactly these arguments.
"""

from pathlib import Path

import torch
import torch.nn as nn

# the call this problem was written for; the integration module swaps a kernel in only where a call matches it
CUDALENS_CALL = {call}
'''

RANDOM = '''

def _random(shape, stride, dtype):
    """A random tensor with the model's shape, strides and dtype (over a storage big enough for the strides)."""
    size = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
    if dtype.is_floating_point or dtype.is_complex:
        flat = torch.randn(size, dtype=dtype)
    elif dtype == torch.bool:
        flat = torch.rand(size) < 0.5
    else:
        flat = torch.randint(0, 8, (size,), dtype=dtype)
    return flat.as_strided(shape, stride)
'''


def stem(row: dict) -> str:
    """`group_norm_1a2b3c4d`: named by the call's content, so profiling the model again writes the same call to
    the same file, and a candidate beside it (`….optimized.py`) stays paired with its problem."""
    key = (row["function"], row["arguments"]) + ((row["then"],) if row.get("then") else ())
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9]+', '_', row['name']).strip('_') or 'op'}_{digest}"


def input_names(arguments: list[list]) -> list[str]:
    """The forward's parameter names: one per tensor argument (a list argument's elements numbered)."""
    names: list[str] = []

    def add(name: str) -> None:
        name = re.sub(r"\W", "_", name)
        if keyword.iskeyword(name) or name in ("self", "torch", "nn", "Path", "_random", "saved", "produced") or not name:
            name += "_"
        while name in names:
            name += "_"
        names.append(name)

    for name, want in arguments:
        if "tensor" in want:
            add(name)
        for j in range(len(want.get("tensors", ()))):
            add(f"{name}{j}")
    return names


def input_arguments(row: dict) -> list[list]:
    """The arguments whose tensors are the problem's inputs, in order: the call's, then (a chain's) the
    consumer's but the one that takes the call's output."""
    then = row.get("then")
    return row["arguments"] + ([a for a in then["arguments"] if a[0] != then["input"]] if then else [])


def literal(value: Any) -> str:
    if isinstance(value, list):
        return "(" + ", ".join(literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def call_text(function: str, arguments: list[list], positional: int, names: list[str]) -> str:
    queue = list(names)
    parts = []
    for i, (name, want) in enumerate(arguments):
        if "tensor" in want:
            text = queue.pop(0)
        elif "tensors" in want:
            text = "[" + ", ".join(queue.pop(0) for _ in want["tensors"]) + "]"
        elif "dtype" in want:
            text = f"torch.{want['dtype']}"
        else:
            text = literal(want["value"])
        parts.append(text if i < positional else f"{name}={text}")
    return f"{function}({', '.join(parts)})"


def tensor_metas(arguments: list[list]) -> list[dict]:
    out: list[dict] = []
    for _, want in arguments:
        if "tensor" in want:
            out.append(want["tensor"])
        out.extend(want.get("tensors", ()))
    return out


RECORDED = '''

_RECORDED = Path(__file__).with_name({name!r})
if not _RECORDED.exists():  # a copy of this file elsewhere (the optimize loop runs one)
    _RECORDED = Path({at!r})


def get_recorded_inputs():
    """The tensors the model passed to this call on its example inputs: the test's trial on real values."""
    return torch.load(_RECORDED, map_location="cpu")
'''


def forward_text(row: dict, names: list[str]) -> str:
    """`Model.forward`'s body: the call (a chain's, into `produced`, then the consumer on it)."""
    then = row.get("then")
    own = len(tensor_metas(row["arguments"]))
    call = call_text(row["function"], row["arguments"], row["positional"], names[:own])
    if not then:
        return f"        return {call}\n"
    others = iter(names[own:])
    theirs = ["produced" if name == then["input"] else next(others) for name, want in then["arguments"]
              for _ in range(1 if "tensor" in want else len(want.get("tensors", ())))]
    return (f"        produced = {call}\n"
            f"        return {call_text(then['function'], then['arguments'], then['positional'], theirs)}\n")


def render(row: dict, saved: set[str], source: str, weights_file: str | None, weights_at: str = "",
           recorded: tuple[str, str] | None = None) -> str:
    """`recorded`: the file of the model's own inputs to the call, and its absolute path."""
    arguments = input_arguments(row)
    names = input_names(arguments)
    call = {k: row[k] for k in ("function", "positional", "arguments", "module", "then") if k in row}
    then = row.get("then")
    who = f"`{row['module'] or 'the model'}`"
    title = (f"`{row['function']}`, then `{then['function']}` on its output, as {who} calls them in {source}."
             if then else f"`{row['function']}` as {who} calls it in {source}.")
    header = HEADER.format(
        title=title, reference="the two calls in order" if then else "the call itself",
        source=source, share=f"{row['share']:.1%}", clock=row["clock"], device=row["device"],
        calls=_times(row["calls"]),
        weights=f" with the model's own weights ({weights_file}); its other" if weights_file else "; its",
        call=pprint.pformat(call, width=110, sort_dicts=False),
    )
    inputs = []
    for name, meta in zip(names, tensor_metas(arguments), strict=True):
        if name in saved:
            inputs.append(f"saved[{name!r}].clone()")
        else:
            inputs.append(f"_random({tuple(meta['shape'])}, {tuple(meta['stride'])}, torch.{meta['dtype']})")
    body = [header]
    if weights_file:
        body.append(f"_SAVED = Path(__file__).with_name({weights_file!r})\n"
                    "if not _SAVED.exists():  # a copy of this file elsewhere (the optimize loop runs one)\n"
                    f"    _SAVED = Path({weights_at!r})\n")
    body.append(
        "\nclass Model(nn.Module):\n"
        f"    def forward(self, {', '.join(names)}):\n"
        + forward_text(row, names) +
        "\n\ndef get_inputs():\n"
        + ("    saved = torch.load(_SAVED, map_location=\"cpu\")\n" if weights_file else "")
        + "    return [\n" + "".join(f"        {text},\n" for text in inputs) + "    ]\n"
        "\n\ndef get_init_inputs():\n    return []\n"
    )
    if recorded is not None:
        body.append(RECORDED.format(name=recorded[0], at=recorded[1]))
    if len(saved) < len(names):
        body.append(RANDOM)
    return "".join(body)


def _times(calls: float) -> str:
    return "once" if calls == 1 else f"{calls:g} times"


def write(row: dict, folder: Path, source: str, saved: dict[str, Any], recorded: list[Any] | None = None) -> Path:
    """The problem file (and its weights) for `row`; `saved`: the tensors to keep by input name (the model's
    parameters and buffers, and any non-float tensor, whose values matter); `recorded`: every tensor argument
    of the model's own call, in order (None: not recorded)."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    name = stem(row)
    weights_file = f"{name}.pt" if saved else None
    if weights_file:
        torch.save({k: v.detach().cpu().clone() for k, v in saved.items()}, folder / weights_file)
    inputs = None
    if recorded is not None:
        inputs = (f"{name}.recorded.pt", str((folder / f"{name}.recorded.pt").resolve()))
        torch.save([t.detach().cpu() for t in recorded], folder / inputs[0])
    path = folder / f"{name}.py"
    text = render(row, set(saved), source, weights_file, str((folder / (weights_file or "")).resolve()), inputs)
    path.write_text(text, encoding="utf-8")
    return path
