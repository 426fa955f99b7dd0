"""Options and checks shared by the commands that run user kernels on the GPU (test, profile, validate)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_common_arguments(parser: argparse.ArgumentParser, *, timeout: float, reference: bool = True) -> None:
    if reference:
        parser.add_argument("--reference", help="the reference .py (Model, get_inputs, get_init_inputs)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with CUDA torch that runs the kernels")
    parser.add_argument("--timeout", type=float, default=timeout, help=f"seconds before a run is killed (default {timeout:.0f})")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def existing_file(command: str, name: str) -> Path | None:
    """The path, or None after saying on stderr that it does not exist (the caller exits with status 2)."""
    path = Path(name)
    if path.is_file():
        return path
    print(f"cudalens {command}: {path}: no such file", file=sys.stderr)
    return None
