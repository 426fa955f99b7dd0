"""The `cudalens` command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    print("cudalens: not implemented yet", file=sys.stderr)
    return 2
