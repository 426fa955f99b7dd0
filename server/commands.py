"""The workspace/executeCommand table: one place where each LSP command of cudalens gets its implementation.

Each entry is an async function `(server, arguments) -> Any` living in a module named for its part
(gpu_commands.py, optimize_commands.py); each answers `{"ok", "message", ...}` and shows the message.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer

RUN_TESTS = "cudalens.runTests"
PROFILE = "cudalens.profile"
OPTIMIZE = "cudalens.optimizeKernel"
VALIDATE = "cudalens.validate"
ASK_CODER = "cudalens.askCoder"
FIX_WITH_CODER = "cudalens.fixWithCoder"
APPLY_OPTIMIZATION = "cudalens.applyOptimization"
FIND_HOT_OPS = "cudalens.findHotOps"
SHOW_REPORT = "cudalens.showReport"

CommandHandler = Callable[["CudalensServer", list[Any]], Awaitable[Any]]


def _on_first_call(target: str) -> CommandHandler:
    """The handler `module:function`, its module imported when the command first runs: the Coder's commands
    bring the optimize loop and the OpenAI client (≈ 0.9 s of imports), the GPU ones the profiler and the
    Judge, that the server's start (and a new window's first diagnostics) need not wait for
    (tests/server/test_start_imports.py)."""
    module, _, name = target.partition(":")

    async def handler(server: CudalensServer, arguments: list[Any]) -> Any:
        return await getattr(importlib.import_module(module), name)(server, arguments)

    handler.__name__ = handler.__qualname__ = name
    return handler


# Each command's title, as its progress and its line in the log say it.
TITLES = {
    RUN_TESTS: "Run tests", PROFILE: "Profile", OPTIMIZE: "Optimize", VALIDATE: "Validate hints",
    ASK_CODER: "Ask Coder", FIX_WITH_CODER: "Fix with Coder", APPLY_OPTIMIZATION: "Apply the proposal",
    FIND_HOT_OPS: "Find hot ops", SHOW_REPORT: "Show report",
}

COMMANDS: dict[str, CommandHandler] = {
    RUN_TESTS: _on_first_call("cudalens.server.gpu_commands:run_tests"),
    PROFILE: _on_first_call("cudalens.server.gpu_commands:profile"),
    OPTIMIZE: _on_first_call("cudalens.server.optimize_commands:optimize_kernel"),
    VALIDATE: _on_first_call("cudalens.server.gpu_commands:validate"),
    ASK_CODER: _on_first_call("cudalens.server.optimize_commands:ask_coder"),
    FIX_WITH_CODER: _on_first_call("cudalens.server.optimize_commands:fix_with_coder"),
    APPLY_OPTIMIZATION: _on_first_call("cudalens.server.optimize_commands:apply_optimization"),
    FIND_HOT_OPS: _on_first_call("cudalens.server.model_commands:find_hot_ops"),
    SHOW_REPORT: _on_first_call("cudalens.server.report_commands:show_report"),
}
