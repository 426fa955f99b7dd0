"""`cudalens.findHotOps` (arguments `[uri, entry]`, from the "Find hot ops" lens): `cudalens model` on the saved
file — its table in the Output (the server's log channel) and a one-line summary as a message. It runs the
file's code, so only in a trusted workspace; it writes no file (no problems: the command line does that)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from cudalens.model.profile import ModelError, profile_model, render_table
from cudalens.server.command_runs import stage
from cudalens.server.gpu_commands import answer, target

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer


async def find_hot_ops(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    state, entry, why = target(server, arguments)
    if state is None:
        return answer(server, False, why)
    settings = server.service.settings
    name = Path(state.path).name
    stage(f"running {name} under the PyTorch profiler")
    try:
        profile = await asyncio.get_running_loop().run_in_executor(None, lambda: profile_model(
            state.path, entry, python=settings.worker.python, timeout_s=settings.worker.timeout_seconds,
        ))
    except ModelError as exc:
        return answer(server, False, f"cudalens: {exc}")
    table = render_table(profile)
    server.window_log_message(types.LogMessageParams(types.MessageType.Info, table))
    top = ", ".join(f"{c.name} {c.share:.0%}" for c in profile.calls[:3])
    return answer(server, True, f"cudalens: hot ops of {name}: {top} (the table is in the Output)", table=table,
                  calls=[{"name": c.name, "module": c.module, "share": c.share, "calls": c.calls,
                          "advice": c.advice, "shapes": c.shapes()} for c in profile.calls])
