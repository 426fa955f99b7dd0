"""`cudalens serve`, as a plugin of the CLI's dispatcher: the language server lives in cudalens.server."""

from __future__ import annotations

import argparse

from cudalens.server.main import add_arguments as _add_arguments
from cudalens.server.main import serve_command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return serve_command(args)
