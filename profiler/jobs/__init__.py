"""Job modules for the worker: `<kind>_job.py` with `run(payload[, ctx]) -> dict`.

Never imported as a package by the worker (it loads each file by path, see docs/profiler.md); this file only
makes the folder ship with cudalens.
"""
