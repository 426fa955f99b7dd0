"""What the interpreter's torch is, read from its files: importing torch takes 3-5 s, and the worker's handshake and
a build started during that import (fast_inline.start_early) need only its folder and its version.
Standard library only.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path


def folder() -> Path | None:
    """torch's package folder, or None where this interpreter has no torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache  # a process's torch does not change; every fast build's folder is named by it
def versions() -> tuple[str | None, str | None]:
    """(torch's version, the CUDA version it was built with): `torch.__version__` and `torch.version.cuda`. (None,
    None): no torch; ("unknown", None): its version file did not run."""
    where = folder()
    if where is None:
        return None, None
    values: dict = {}
    version_file = where / "version.py"
    try:
        exec(compile(version_file.read_text(encoding="utf-8"), str(version_file), "exec"), values)
    except Exception:
        return "unknown", None
    return str(values.get("__version__", "unknown")), values.get("cuda")
