"""`cudalens serve`: start the language server over stdio (editors) or TCP (debugging)."""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from cudalens.server import generated_code

logger = logging.getLogger("cudalens.server")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead (for debugging)")
    parser.add_argument("--log-file", metavar="PATH", help="where to write the server log "
                        "(default: $XDG_CACHE_HOME/cudalens/server.log)")
    parser.add_argument("--log-level", default="info", choices=("error", "warning", "info", "debug"))
    parser.add_argument("--warm", action="store_true", help="fork this window's server from this session's warm "
                        "server, started for the next window when there is none (server/warm_start.py)")


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="cudalens serve", description=__doc__)
    add_arguments(made)
    return made


def _host_port(value: str) -> tuple[str, int] | None:
    host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host or "127.0.0.1", int(port)


def serve_command(args: argparse.Namespace) -> int:
    """Run the server until the editor says exit, closes the stream, or dies. Never returns normally from
    stdio mode: the process exits without waiting for threads (see lifecycle.hard_exit)."""
    if args.tcp and _host_port(args.tcp) is None:
        print(f"cudalens serve: --tcp wants HOST:PORT, not {args.tcp!r}", file=sys.stderr)
        return 2
    if args.warm and not args.tcp:
        from cudalens.server import warm_start
        from cudalens.worker.warm import WarmUnavailable

        try:
            path = warm_start.socket_path()
        except WarmUnavailable as exc:
            print(f"cudalens serve: no warm start ({exc})", file=sys.stderr)
        else:
            options = ["--log-level", args.log_level, *(["--log-file", args.log_file] if args.log_file else [])]
            code = warm_start.hand_over(path, options)
            if code is not None:
                return code
            # for the next window, once this one's first diagnostics are out: its imports and first analysis would
            # take the cores this window's own start is waiting for
            return run_server(args, load(), lambda: warm_start.start(path))
    return run_server(args, load())


def load() -> generated_code.CodeCache:
    """What every server imports before it can answer: from here on a window waits for nothing of ours but its
    own messages (the warm server calls this once and forks)."""
    # No cyclic collection while the server loads: the imports leave ≈ 17,000 objects of cyclic garbage (attrs'
    # first classes, ≈ 8 MB) and the collector would walk the growing heap ≈ 20 times for them, ≈ 80 ms of a new
    # window's wait. lifecycle.settle_heap collects once the first diagnostics are out.
    gc.disable()
    from cudalens.server import generated_code

    code = generated_code.start()  # before lsprotocol and our dataclasses are imported: it is their code
    from cudalens.server import app  # noqa: F401 - the imports themselves are the point

    return code


def run_server(args: argparse.Namespace, code: generated_code.CodeCache,
               after_first_diagnostics: Callable[[], None] | None = None) -> int:
    """The server over stdio (or --tcp), once `load` has run in this process (or in the one it was forked from);
    `after_first_diagnostics` runs once the first diagnostics are out (app.after_first_diagnostics)."""
    from cudalens.server import generated_code, key_pipe, lifecycle

    address = _host_port(args.tcp) if args.tcp else None
    protocol_out = None if address else lifecycle.protect_stdout()
    lifecycle.setup_logging(args.log_file, args.log_level)
    key_pipe.receive()  # the stored key, while we load (the extension no longer waits for it to start us)
    lifecycle.exit_on_signals()

    from cudalens.server.app import create_server

    server = create_server()
    if after_first_diagnostics is not None:
        server.after_first_diagnostics(after_first_diagnostics)
    code.save(at_least=generated_code.REWRITE_AT_START)  # the rest, with what the messages add, at exit
    lifecycle.at_exit(code.save)
    try:
        if address:
            server.start_tcp(*address)
        else:
            server.start_io(lifecycle.ExitAtEof(sys.stdin.buffer, lambda: server.protocol._shutdown), protocol_out)
    except Exception:
        logger.exception("the server stopped on an error")
        lifecycle.hard_exit(1)
    server.stop_everything()
    lifecycle.hard_exit(0 if server.protocol._shutdown else 1)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m cudalens.server`."""
    from cudalens.profiler import child_env

    child_env.scrub()  # before anything can start a child that reads our environment block
    return serve_command(parser().parse_args(argv))
