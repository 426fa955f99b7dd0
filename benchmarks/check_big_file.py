"""`cudalens check` on one big generated `.cu` (issue 12's denial of service): copies of one kernel with its
launcher (tests/cli/fixtures/transpose_naive.cu, names unchanged), 250 / 500 / 1,000 copies and enough for
5 MB; then the same counts of distinct kernels launched from one host function. Prints the seconds and peak
RSS of each `cudalens` process (its own rusage, from wait4). Goal: the 5 MB file in under 60 s and 1 GB —
above the analyzer's 1M-character limit it is one CL001 finding; `--no-limit` lifts the limit (in the child
only) to show what analysing all of it costs.

Run: python benchmarks/check_big_file.py [--python PY] [--timeout S] [--no-limit] [--copies 250,500]
(`--python` picks the interpreter whose cudalens is measured, e.g. another checkout's .venv/bin/python.)
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL = Path(__file__).resolve().parent.parent / "tests" / "cli" / "fixtures" / "transpose_naive.cu"
FIVE_MB = 5_000_000
# the child's `cudalens check FILE`, with the size limit lifted when asked (the module reads it at call time)
CHILD = (
    "import sys\n"
    "if sys.argv[2] == 'no-limit':\n"
    "    import cudalens.analysis.api as api\n"
    "    api.MAX_ANALYSED_CHARS = 10**12\n"
    "from cudalens.cli.main import main\n"
    "sys.exit(main(['check', sys.argv[1]]))\n"
)


def copies_of_one_kernel(count: int) -> str:
    return "\n".join([KERNEL.read_text()] * count)


def launched_from_one_function(count: int) -> str:
    kernel = (
        "__global__ void t_{i}(const float* in, float* out, int n) {{\n"
        "    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "    if (x < n && y < n) out[x * n + y] = in[y * n + x];\n"
        "}}\n"
    )
    launches = "".join(f"    t_{i}<<<grid, block>>>(in, out, 1024);\n" for i in range(count))
    return ("".join(kernel.format(i=i) for i in range(count))
            + "void launch_all(const float* in, float* out) {\n    dim3 block(32, 8);\n    dim3 grid(32, 128);\n"
            + launches + "}\n")


def measure(python: str, path: Path, no_limit: bool, timeout: float) -> tuple[float, float, str]:
    """Seconds, peak RSS in MB and how it ended, of one `cudalens check` run."""
    output = path.with_suffix(".out")
    started = time.perf_counter()
    with output.open("w") as sink:  # a file, not a pipe: a full pipe would stall the child
        child = subprocess.Popen([python, "-c", CHILD, str(path), "no-limit" if no_limit else "limit"],
                                 stdout=sink, stderr=subprocess.STDOUT)
    ended = "killed"
    deadline = started + timeout
    while time.perf_counter() < deadline:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.05)
    else:
        child.send_signal(signal.SIGKILL)
        pid, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode >= 0:
        last = [line for line in output.read_text().splitlines() if line.strip()]
        ended = f"exit {child.returncode}: {last[-1][:60] if last else ''}"
    return seconds, usage.ru_maxrss / 1024, ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run is killed")
    parser.add_argument("--no-limit", action="store_true", help="lift the 1M-character limit in the child")
    parser.add_argument("--copies", default="250,500,1000,all", help="counts; 'all' = enough for 5 MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for label, make in (("copies of one kernel", copies_of_one_kernel),
                            ("kernels launched from one function", launched_from_one_function)):
            print(f"{label} ({'limit lifted' if args.no_limit else 'as shipped'}):")
            each = len(make(2)) - len(make(1))
            for count in [FIVE_MB // each + 1 if c == "all" else int(c) for c in args.copies.split(",")]:
                path = Path(folder) / f"big_{count}.cu"
                text = make(count)
                path.write_text(text)
                seconds, rss, ended = measure(args.python, path, args.no_limit, args.timeout)
                print(f"  {count:>6} kernels {len(text) / 1e6:5.2f} MB  {seconds:7.1f} s  {rss:7.0f} MB peak RSS"
                      f"  ({ended})", flush=True)


if __name__ == "__main__":
    main()
