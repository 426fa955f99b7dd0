"""The `cudalens` command line: a dispatcher over a table of subcommands.

Each subcommand lives in its own module, imported only when it is the one being run, so `cudalens check` in a
pre-commit hook never pays for the language server or torch. A subcommand is a module (or an object in a
module, named `module:attr`) with `add_arguments(parser)` and `run(args) -> int`; an attribute that is a plain
function is taken as `run`, and its module's `add_arguments`, if any, declares the options. Adding a command
is one line in COMMANDS and one module.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from cudalens import __version__
from cudalens.cli.escape import printable
from cudalens.profiler import child_env, processes

EXIT_USAGE = 2


@dataclass(frozen=True)
class Command:
    name: str
    target: str  # "package.module" or "package.module:attr"
    help: str


COMMANDS: tuple[Command, ...] = (
    Command("check", "cudalens.cli.check", "check CUDA sources and PyTorch files with inline CUDA"),
    Command("rules", "cudalens.cli.rules_cmd:ListRules", "list every rule code"),
    Command("rule", "cudalens.cli.rules_cmd:ShowRule", "print one rule's documentation"),
    Command("serve", "cudalens.server.main:serve_command", "run the language server (stdio)"),
    Command("test", "cudalens.cli.test_cmd", "compile and test kernels against their PyTorch reference"),
    Command("profile", "cudalens.cli.profile_cmd", "profile kernels with Nsight Compute"),
    Command("optimize", "cudalens.cli.optimize_cmd", "optimize a kernel with the Coder-Judge loop"),
    Command("validate", "cudalens.cli.validate_cmd", "validate the analyzer against measured hardware truth"),
)


class UsageError(Exception):
    """A problem with the command line or the configuration: one line on stderr (a line per problem when it
    names several), exit status 2."""


class _Parser(argparse.ArgumentParser):
    # argparse exits with status 2 and usage text; keep the status but make the message one line
    def error(self, message: str) -> Any:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


@dataclass(frozen=True)
class _Loaded:
    run: Any
    add_arguments: Any


def _load(command: Command) -> _Loaded:
    """The command's implementation, imported only when it is the one chosen (`check` never loads torch)."""
    module_name, _, attr = command.target.partition(":")
    module: ModuleType = importlib.import_module(module_name)
    target: Any = getattr(module, attr) if attr else module
    if hasattr(target, "run"):
        return _Loaded(target.run, getattr(target, "add_arguments", None))
    return _Loaded(target, getattr(module, "add_arguments", None))


def _chosen_command(argv: list[str]) -> Command | None:
    for arg in argv:
        if not arg.startswith("-"):
            return next((c for c in COMMANDS if c.name == arg), None)
    return None


def build_parser(chosen: Command | None = None, loaded: _Loaded | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cudalens", description="CUDA kernel hints, GPU checks and a Coder-Judge optimizer."
    )
    parser.add_argument("--version", action="version", version=f"cudalens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        if command is chosen and loaded is not None and loaded.add_arguments is not None:
            loaded.add_arguments(child)
    return parser


def _dispatch(argv: list[str], chosen: Command | None) -> int:
    loaded = _load(chosen) if chosen else None
    parser = build_parser(chosen, loaded)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if loaded is None:
        parser.print_usage(sys.stderr)
        return EXIT_USAGE
    return int(loaded.run(args) or 0)


# How long an interrupted command may take to unwind before it leaves anyway.
LEAVE_AFTER_S = 5.0


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised in the main thread: it unwinds like Ctrl-C, so `finally` blocks and `atexit`
    (profiler/processes.py) end every child, where Python's default would leave them running."""


def _interrupted(number: int, _frame: object) -> None:
    """SIGINT, SIGTERM, SIGHUP: unwind. An interrupt can land inside a lock's bookkeeping and leave a thread
    waiting forever (`cudalens check`'s pool manager, once in some 60 runs under load), and interpreter shutdown
    joins such threads; so if unwinding has not ended the process after `LEAVE_AFTER_S`, it leaves anyway, its
    children killed first."""
    watchdog = threading.Timer(LEAVE_AFTER_S, _leave, (128 + number,))
    watchdog.daemon = True  # a normal unwind is not held back by it
    watchdog.start()
    if number == signal.SIGINT:
        raise KeyboardInterrupt
    raise _Terminated(number)


def _leave(code: int) -> None:
    processes.close()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(code)


@contextlib.contextmanager
def _unwind_on_interrupt() -> Iterator[None]:
    try:
        previous = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    except ValueError:  # not the main thread (main() called from a test's thread): leave signals alone
        previous = {}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    child_env.scrub()  # before any command can start a child that reads our environment block
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = _chosen_command(argv)
    try:
        with _unwind_on_interrupt():
            return _dispatch(argv, chosen)
    except _Terminated as exc:
        return 128 + exc.args[0]
    except UsageError as exc:
        for line in str(exc).split("\n"):
            print(f"cudalens: error: {printable(line)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `cudalens check | head`: the reader left; point stdout at nothing so the exit flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # a bug of ours, or a command that failed to load: one line, not a traceback
        if os.environ.get("CUDALENS_DEBUG"):
            raise
        print(
            f"cudalens: internal error in '{chosen.name if chosen else '?'}': {type(exc).__name__}: "
            f"{printable(str(exc))} (set CUDALENS_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_USAGE
