"""Loading a Python file by its path, as a module: the user's problem and candidate files, the extensions a build
made, a job module of a folder the parent names. The generated integration module runs in the user's own program,
without this folder: it carries a copy of `load_by_path`'s text (integration_module.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_by_path(key: str, path: str | Path, *, fresh: bool = False, source: str | None = None) -> ModuleType:
    """The file `path` run as the module `key`, which is in sys.modules while and after it runs (dataclasses and
    pickle look a module up by its name); the module already under `key` unless `fresh`. `source`: the text to
    run instead of the file's (tracebacks still name the file). A file that fails to run leaves no module."""
    module = None if fresh else sys.modules.get(key)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: cannot be loaded as Python", name=key, path=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        if source is None:
            spec.loader.exec_module(module)
        else:
            exec(compile(source, str(path), "exec"), module.__dict__)
    except BaseException:
        sys.modules.pop(key, None)
        raise
    return module
