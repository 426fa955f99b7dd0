"""Loading a Python file by its path: the one way cudalens does it wherever `import cudalens...` may not work.

The worker, its job modules and the files they run live in an interpreter that may lack cudalens, so each gets
this module by path (`runpy.run_path(".../profiler/jobs_lib/jobkit.py")`, standard library only) and loads the rest
with `load_by_path` or `sibling`: a job in profiler/jobs/ does
`sibling = runpy.run_path(str(Path(__file__).resolve().parents[1] / "jobs_lib" / "jobkit.py"))["sibling"]`, a
library beside this file `runpy.run_path(str(Path(__file__).with_name("jobkit.py")))`. The generated integration
module runs in the user's own program, with neither: it carries a copy of `load_by_path`'s text (integration_module.py).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType

_HERE = Path(__file__).resolve().parent
# a worker loads siblings from two threads (a job's and a Prepare's), and one loaded once must be one module.
# Reentrant: a sibling that runs loads its own
_SIBLINGS = threading.RLock()


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


def sibling(name: str) -> ModuleType:
    """The module `name` ("harness_timing" for jobs_lib/harness_timing.py, "../results" for profiler/results.py,
    "../jobs/test_job"), loaded once per process."""
    path = (_HERE / f"{name}.py").resolve()
    with _SIBLINGS:
        return load_by_path("_cudalens_job_" + path.stem, path)
