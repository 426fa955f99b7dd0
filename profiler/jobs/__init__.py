"""What the worker runs by name (`<kind>_job.py` with `run(payload[, ctx]) -> dict`) and the scripts run as their
own programs (`profile_target.py`, `ncu_report_dump.py`); their libraries are in `profiler/jobs_lib/`.

Never imported as a package by the worker (it loads each file by path, see docs/profiler.md); this file only
makes the folder ship with cudalens.
"""
