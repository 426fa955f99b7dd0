"""The door into this folder for a process started by file path: `python boot.py MODULE ARGS...` registers the
folder as the package `_cudalens_child` (the interpreter may lack cudalens) and runs `MODULE.main(ARGS)` —
`worker_main` (the worker), `jobs.profile_target` (under ncu), `jobs.ncu_report_dump`.

Standard library only, and the one file here that is run, never imported relatively.
"""

import importlib
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "_cudalens_child"


def package():
    """The name this folder's files import under in this process: `cudalens.worker.child` where it was imported
    as such, else `_cudalens_child`, registered from the files on first use."""
    if __package__:
        return __package__
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            PACKAGE, os.path.join(HERE, "__init__.py"), submodule_search_locations=[HERE]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return PACKAGE


def module(name):
    """This folder's module `name` ("worker_main", "lib.harness_timing"), imported once per process."""
    return importlib.import_module(f"{package()}.{name}")


if __name__ == "__main__":
    # Running a file puts its folder first on sys.path: this folder must not shadow anything a job imports
    # (its `protocol.py`, `results.py`, ...).
    if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
        del sys.path[0]
    sys.exit(module(sys.argv[1]).main(sys.argv[2:]))
