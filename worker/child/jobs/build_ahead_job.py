"""A search's build ahead (profiler/prebuild.py `BuildWorkers`): a candidate's extensions built into the caches as
`profile_target.py` builds them with "reps": 0 (its module loaded, `ModelNew` made, no input and nothing on the
GPU), in a child forked from this worker. The worker has imported torch once (its warm-up), so a candidate's
build pays neither a Python start nor torch's import (3-4 s of each on the H200, eight at once on its cores),
and nothing one candidate's code does reaches the next: each runs in a fork of its own, gone when it ends. The
fork stays in the worker's process group, so a timeout or a cancel, which kill the group, end it too.

This worker never initialises CUDA (a forked child could not use a context it inherited): the children do,
where torch asks the device for its architecture.

payload: {"path", ...} (profile_target's, "reps" forced to 0); returns {"ok", "message": the output's last line,
"seconds"}.
"""

from __future__ import annotations

import os
import select
import sys
import time

from . import profile_target

BESIDE_WARM_UP = True  # it compiles only: no profiler session needed (lib/background.py)
OUTPUT_BYTES = 64_000  # what is kept of a build's output (its last line is the message)


def run(payload: dict) -> dict:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raise RuntimeError("build_ahead: this worker has a CUDA context, which a forked build could not use")
    read, write = os.pipe()
    started = time.perf_counter()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: its output into the pipe, then out without the parent's exit handlers
        code = 1
        try:
            os.close(read)
            os.dup2(write, 1)
            os.dup2(write, 2)
            code = profile_target.run_target({**payload, "reps": 0})
        except BaseException as exc:  # whatever the candidate raised, as its one line
            os.write(2, f"cudalens build ahead: {type(exc).__name__}: {exc}".splitlines()[0].encode() + b"\n")
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(write)
    output, status = _collect(read, pid)
    lines = output.decode("utf-8", errors="replace").strip().splitlines()
    ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    message = lines[-1] if lines else "" if ok else f"the build's process ended with status {status}"
    return {"ok": ok, "message": message[:1000], "seconds": time.perf_counter() - started}


def _collect(read: int, pid: int) -> tuple[bytes, int]:
    """The child's output until it exits (a compiler it left running may hold the pipe open: not waited for), and
    its wait status."""
    output = bytearray()
    status = None
    try:
        while status is None:
            ready, _, _ = select.select([read], [], [], 0.1)
            if ready:
                chunk = os.read(read, 65536)
                output += chunk
                del output[:-OUTPUT_BYTES]
                if chunk:
                    continue
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = code
                while select.select([read], [], [], 0)[0] and (chunk := os.read(read, 65536)):
                    output += chunk
                    del output[:-OUTPUT_BYTES]
            elif ready:  # the pipe closed, the child not yet gone
                _, status = os.waitpid(pid, 0)
    finally:
        os.close(read)
    return bytes(output), status
