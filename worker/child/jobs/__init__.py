"""What the worker runs by name (`<kind>_job.py` with `run(payload[, ctx]) -> dict`, and optionally
`prepare(payload)`) and the programs run under ncu (`profile_target`, `ncu_report_dump`: `python boot.py
jobs.NAME ARGS`). Under the child's rule (worker/child/__init__.py)."""
