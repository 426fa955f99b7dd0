"""Echo the payload back; on request misbehave (sleep, hang, crash, exit, spawn) so the worker can be tested.

The example job module: standard library only at top level, `run(payload, ctx)`, a JSON dict out.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def run(payload: dict, ctx=None) -> dict:
    action = payload.get("action", "echo")
    if ctx is not None and payload.get("progress"):
        ctx.progress("echoing", 0.5, payload.get("limit_s"))  # limit_s: the job must end within it
    if payload.get("print"):
        print(payload["print"])  # must not reach the protocol channel
    if action == "sleep":
        time.sleep(float(payload.get("seconds", 1)))
    elif action == "spawn_and_hang":
        # A grandchild that would outlive a careless timeout; its pid goes to a file the test reads.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with open(payload["pid_file"], "w") as fh:
            fh.write(str(child.pid))
        time.sleep(3600)
    elif action == "read_stdin":
        # user code that reads stdin must not swallow the protocol's next message
        return {"stdin": sys.stdin.read(), "child": subprocess.run(
            [sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"], capture_output=True, text=True
        ).stdout.strip()}
    elif action == "cwd":
        return {"cwd": os.getcwd()}
    elif action == "hang":
        while True:
            time.sleep(1)
    elif action == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif action == "sys_exit":
        sys.exit(int(payload.get("code", 3)))
    elif action == "os_exit":
        os._exit(int(payload.get("code", 4)))
    elif action == "raise":
        raise RuntimeError(payload.get("message", "job failed"))
    elif action == "cuda_device_assert":
        import torch  # an out-of-bounds index on the GPU: a device-side assert poisons the CUDA context

        x = torch.zeros(4, device="cuda")
        x[torch.tensor([1000], device="cuda")].sum().item()
    elif action == "cuda_ok":
        import torch

        return {"sum": float(torch.ones(8, device="cuda").sum().item()), "pid": os.getpid()}
    elif action == "not_json":
        return {"value": object()}
    return {"echo": payload, "pid": os.getpid()}
