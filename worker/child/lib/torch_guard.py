"""PyTorch's functions as they were before any candidate ran in this worker, and which ones a file replaced.

The reference computes with torch, in the candidate's process: a file that replaces `torch.sigmoid` (or
`F.softmax`, `torch.Tensor.sum`, `nn.Module.__call__`, …) with something slower makes an honest kernel look
many times faster than the reference (pygpubench's `submission_replace_torch`), and a replaced comparison or
allocation function could fool the checks themselves. `remember()` keeps every public callable of torch's main
namespaces when the worker's first test starts; `replaced()` names those whose object changed to one defined
outside torch (torch's own lazy initialisation is not a replacement). A test that finds one fails (CL906) and
its worker retires, since the replacement would outlive the candidate. Standard library at top level.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# namespace → how to reach it from the torch module
NAMESPACES = ("torch", "torch.nn.functional", "torch.Tensor", "torch.nn.Module", "torch.special", "torch.linalg",
              "torch.fft", "torch.testing")
_ORIGINALS: dict[str, Any] = {}
_TORCH_DIR: list[Path] = []


def _namespaces() -> dict[str, Any]:
    import torch
    import torch.nn.functional

    found = {}
    for name in NAMESPACES:
        value: Any = torch
        for attr in name.split(".")[1:]:
            value = getattr(value, attr, None)
        if value is not None:
            found[name] = value
    return found


def _callables(space: Any) -> dict[str, Any]:
    out = {}
    for attr in dir(space):
        if attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__")):
            continue  # private; the operators (`__add__`, `__call__`, `__eq__`) are what the reference calls
        try:
            value = getattr(space, attr)
        except Exception:  # a lazy attribute that fails to load: nothing to guard
            continue
        if callable(value) and not isinstance(value, type(sys)):
            out[attr] = value
    return out


def remember() -> None:
    """Keeps torch's callables at the first call in this process (later calls change nothing)."""
    if _ORIGINALS:
        return
    try:
        spaces = _namespaces()
    except ImportError:
        return
    import torch

    _TORCH_DIR.append(Path(torch.__file__).resolve().parent)
    for name, space in spaces.items():
        for attr, value in _callables(space).items():
            _ORIGINALS[f"{name}.{attr}"] = value


def _defined_in(value: Any) -> tuple[str | None, int]:
    func = getattr(value, "__func__", value)
    func = getattr(func, "__wrapped__", func) if not hasattr(func, "__code__") else func
    code = getattr(func, "__code__", None)
    if code is not None:
        return code.co_filename, code.co_firstlineno
    module = sys.modules.get(getattr(type(value), "__module__", "") or "")
    return getattr(module, "__file__", None), 0


def _outside_torch(file: str | None) -> bool:
    if file is None or not _TORCH_DIR:
        return False
    path = Path(file).resolve()
    return not any(path == d or d in path.parents for d in _TORCH_DIR)


def replaced() -> list[tuple[str, str | None, int]]:
    """(name, file, line) of each remembered callable now replaced by one defined outside torch."""
    if not _ORIGINALS:
        return []
    spaces = _namespaces()
    found = []
    for qualified, original in _ORIGINALS.items():
        name, attr = qualified.rsplit(".", 1)
        space = spaces.get(name)
        now = getattr(space, attr, original) if space is not None else original
        if now is original:
            continue
        file, line = _defined_in(now)
        if _outside_torch(file):
            found.append((qualified, file, line))
    return found
