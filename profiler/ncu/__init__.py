"""Nsight Compute: the command that profiles only a file's kernels, its report read back (the `ncu_report`
module where ncu ships one, else CSV), per-line source counters mapped to the user's lines, and a cache by
source hash. compute-sanitizer lives in `cudalens.profiler.sanitizer`."""
