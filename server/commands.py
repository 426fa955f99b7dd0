"""The workspace/executeCommand table: one place where each LSP command of cudalens gets its implementation.

Each entry is an async function `(server, arguments) -> Any` living in a module named for its part
(gpu_commands.py, optimize_commands.py); each answers `{"ok", "message", ...}` and shows the message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from cudalens.server import gpu_commands, model_commands, optimize_commands, report_commands

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


COMMANDS: dict[str, CommandHandler] = {
    RUN_TESTS: gpu_commands.run_tests,
    PROFILE: gpu_commands.profile,
    OPTIMIZE: optimize_commands.optimize_kernel,
    VALIDATE: gpu_commands.validate,
    ASK_CODER: optimize_commands.ask_coder,
    FIX_WITH_CODER: optimize_commands.fix_with_coder,
    APPLY_OPTIMIZATION: optimize_commands.apply_optimization,
    FIND_HOT_OPS: model_commands.find_hot_ops,
    SHOW_REPORT: report_commands.show_report,
}
