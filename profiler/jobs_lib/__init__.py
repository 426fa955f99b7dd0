"""The libraries of the jobs and scripts in `profiler/jobs/`: standard library only, each loaded by path with
`jobkit.py`'s `sibling("name")` (in the worker's interpreter, which may lack cudalens, and in the parent through
`profiler/job_modules.py`).

Never imported as a package (see docs/profiler.md); this file only makes the folder ship with cudalens.
"""
