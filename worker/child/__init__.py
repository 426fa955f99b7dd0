"""What runs in the user's interpreter: the worker process, its jobs (`jobs/`), their libraries (`lib/`), the
protocol and the results they send back.

The rule: standard library at top level (torch, cupy and ncu_report only inside the functions that need them)
and nothing of ours outside this folder. The user's `worker.python` may have torch and not cudalens, so the
worker starts from `boot.py` by path and registers this folder as the package `_cudalens_child`; the files import
each other relatively, and the parent imports the same files as `cudalens.worker.child.*`: one copy serves both.
tests/profiler/test_child_bare.py loads every file here in an interpreter without cudalens or any third-party
package, and runs a real job in one that has torch and nothing else.
"""
