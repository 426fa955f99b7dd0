"""A user's file that builds a whole model and its example inputs (docs/model.md): what `cudalens model` runs.

The conventions, in this order:
- `FILE:ENTRY`: the function `ENTRY()` returns `(model, inputs)`;
- a KernelBench level-3 file: `Model(*get_init_inputs())` called on `get_inputs()`;
- a function `model_and_inputs()` returning `(model, inputs)`.
`inputs` is a tensor, a list or tuple of positional arguments, or a dict of keyword arguments. The model runs
as inference: `eval()`, under `torch.no_grad()`. Standard library at top level; torch inside functions.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import problem_loader

DEFAULT_ENTRY = "model_and_inputs"


class EntryError(Exception):
    """The file does not build a model the way docs/model.md says; the message says what is missing, in one
    line."""


@dataclass
class Built:
    model: Any
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    how: str = ""  # "model_and_inputs()", "Model/get_inputs"

    def __call__(self) -> Any:
        return self.model(*self.args, **self.kwargs)


def build(path: str, entry: str | None, device: str) -> Built:
    import torch

    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise EntryError(f"{path}: no such file")
    sys.path.insert(0, str(file.parent))  # the model's own imports of its neighbours
    module = problem_loader.load_module(file)
    torch.manual_seed(0)
    if entry:
        made = _from_entry(module, entry, file)
        how = f"{entry}()"
    elif hasattr(module, "Model") and hasattr(module, "get_inputs"):
        init = getattr(module, "get_init_inputs", list)()
        made = (module.Model(*init), module.get_inputs())
        how = "Model/get_inputs"
    elif hasattr(module, DEFAULT_ENTRY):
        made = _from_entry(module, DEFAULT_ENTRY, file)
        how = f"{DEFAULT_ENTRY}()"
    else:
        raise EntryError(
            f"{file.name} defines neither Model and get_inputs (KernelBench) nor {DEFAULT_ENTRY}(); "
            f"name the function that returns (model, inputs): {file.name}:ENTRY"
        )
    model, inputs = made
    if not isinstance(model, torch.nn.Module):
        raise EntryError(f"{file.name}: {how} gave a {type(model).__name__} as the model, not a torch.nn.Module")
    dev = torch.device(device)
    model = model.to(dev).eval()
    if isinstance(inputs, dict):
        return Built(model, [], {k: _to(v, dev) for k, v in inputs.items()}, how)
    if isinstance(inputs, torch.Tensor):
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)):
        raise EntryError(f"{file.name}: {how} gave {type(inputs).__name__} as the inputs; expected a tensor, a "
                         "list or tuple of arguments, or a dict of keyword arguments")
    return Built(model, [_to(v, dev) for v in inputs], {}, how)


def _from_entry(module: Any, entry: str, file: Path) -> tuple[Any, Any]:
    fn = getattr(module, entry, None)
    if not callable(fn):
        raise EntryError(f"{file.name} has no function {entry}()")
    made = fn()
    if not isinstance(made, (tuple, list)) or len(made) != 2:
        raise EntryError(f"{file.name}: {entry}() must return (model, inputs), got {type(made).__name__}")
    return made[0], made[1]


def _to(value: Any, device: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    return value


def default_device(asked: str | None) -> str:
    import torch

    return asked or ("cuda" if torch.cuda.is_available() else "cpu")


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def from_payload(payload: dict) -> tuple[Built, str]:
    """The model a whole-model job names (`path`, `entry`, `device`), built on its device; EntryError as `build`."""
    device = default_device(payload.get("device"))
    return build(payload["path"], payload.get("entry"), device), device
