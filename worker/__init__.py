"""cudalens.worker: the process boundary, both sides of it.

The parent side (`pool.py`: start a worker, send it jobs, turn every way it fails into a result; `run_job.py`: one
job in a fresh worker; `settings.py`; `jobs.py`: where the child's files are) runs in cudalens's own interpreter.
`child/` is what runs in the user's interpreter, under its own rule (child/__init__.py).
"""
