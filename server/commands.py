"""The workspace/executeCommand table: one place where each LSP command of cudalens gets its implementation.

Each entry is an async function `(server, arguments) -> Any` living in a module named for its part
(gpu_commands.py, optimize_commands.py); a command whose part is missing answers "not available yet".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from cudalens.server import gpu_commands

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer

RUN_TESTS = "cudalens.runTests"
PROFILE = "cudalens.profile"
OPTIMIZE = "cudalens.optimizeKernel"
VALIDATE = "cudalens.validate"
ASK_CODER = "cudalens.askCoder"
FIX_WITH_CODER = "cudalens.fixWithCoder"
APPLY_OPTIMIZATION = "cudalens.applyOptimization"

CommandHandler = Callable[["CudalensServer", list[Any]], Awaitable[Any]]


def not_available(what: str) -> CommandHandler:
    async def handler(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
        message = f"cudalens: {what} is not available yet in this version."
        server.window_show_message(types.ShowMessageParams(types.MessageType.Info, message))
        return {"ok": False, "message": message}

    return handler


COMMANDS: dict[str, CommandHandler] = {
    RUN_TESTS: gpu_commands.run_tests,
    PROFILE: gpu_commands.profile,
    OPTIMIZE: not_available("Optimize kernel"),
    VALIDATE: gpu_commands.validate,
    ASK_CODER: not_available("Ask the Coder"),
    FIX_WITH_CODER: not_available("Fix with the Coder"),
    APPLY_OPTIMIZATION: not_available("Apply optimization"),
}
