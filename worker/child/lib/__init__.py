"""The libraries of the jobs in `worker/child/jobs/`: harnesses, the problem loader, the fast builds, the model's
calls. Under the child's rule (worker/child/__init__.py)."""
