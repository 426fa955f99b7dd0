"""How job modules reach their siblings. Jobs are loaded by file path in an interpreter that may lack
cudalens, so they cannot `import cudalens...`; each does
`sibling = runpy.run_path(str(Path(__file__).with_name("jobkit.py")))["sibling"]` and loads the rest by path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_HERE = Path(__file__).resolve().parent


def sibling(name: str) -> ModuleType:
    """The module `name` ("harness_timing", or "../results" for profiler/results.py), loaded once per process."""
    path = (_HERE / f"{name}.py").resolve()
    key = "_cudalens_job_" + path.stem
    module = sys.modules.get(key)
    if module is None:
        spec = importlib.util.spec_from_file_location(key, path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # before exec: dataclasses look their module up while being created
        spec.loader.exec_module(module)
    return module
