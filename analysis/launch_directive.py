"""`// cudalens: launch block=(8,4,2)`: the launch configuration of a kernel that is launched where the analyzer
cannot see (another project, Python, a library), written in a comment directly above its definition.

    // cudalens: launch block=(32,8) TILE=32 T=float n=4096
    template <int TILE, typename T> __global__ void k(T* out, int n) { ... }

`block=` takes one to three dimensions, `(256)`, `256`, `(32,8)` or `32x8`; any other `NAME=value` gives a
template parameter (an integer or a type) or an integer parameter of the kernel its value. Several directive
lines are several configurations, each analysed. A directive that cannot be read is reported, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.unit import Function

_DIRECTIVE = re.compile(r"cudalens\s*:\s*launch\b(?P<rest>.*)")
_PAIR = re.compile(r"(?P<key>[A-Za-z_]\w*)\s*=\s*(?P<value>\([^)]*\)|[^\s,;]+)")
_INT = re.compile(r"^\d+$")
_TYPE = re.compile(r"^[A-Za-z_][\w:]*(?:\s*\*)?$")


@dataclass(frozen=True)
class LaunchDirective:
    line: int  # 1-based, in the unit's text
    block: tuple[int, int, int] | None
    values: tuple[tuple[str, int | str], ...]  # template and integer parameters by name


@dataclass(frozen=True)
class DirectiveError:
    line: int
    message: str


def launch_directives(function: Function) -> list[LaunchDirective | DirectiveError]:
    """The directives in the comments right above a kernel (above its `template <...>` line if it has one)."""
    row = (function.template or function.node).start_point[0]
    out: list[LaunchDirective | DirectiveError] = []
    for node in reversed(function.comments_above):  # the nearest first: a blank line ends the run
        if node.end_point[0] < row - 1:
            break
        match = _DIRECTIVE.search(ts.text(node))
        if match is not None:
            out.append(parse_directive(match["rest"].rstrip(" */"), node.start_point[0] + 1))
        row = node.start_point[0]
    return list(reversed(out))


def parse_directive(rest: str, line: int) -> LaunchDirective | DirectiveError:
    pairs = list(_PAIR.finditer(rest))
    leftover = _PAIR.sub("", rest).strip(" ,;")
    if leftover or not pairs:
        return DirectiveError(line, f"cannot read the `cudalens: launch` directive (expected `block=(x,y,z)` and "
                                    f"`NAME=value` pairs, got `{rest.strip()}`)")
    block = None
    values: list[tuple[str, int | str]] = []
    for pair in pairs:
        key, value = pair["key"], pair["value"].strip()
        if key == "block":
            inner = value.strip("() ")
            dims = [d.strip() for d in re.split(r"," if "," in inner else r"[x×]", inner)]
            if not 1 <= len(dims) <= 3 or not all(_INT.match(d) and int(d) > 0 for d in dims):
                return DirectiveError(line, f"`block={value}` in a `cudalens: launch` directive: expected one to "
                                            "three positive integers, e.g. `block=(32,8)`")
            block = tuple(int(d) for d in dims) + (1,) * (3 - len(dims))
        elif _INT.match(value):
            values.append((key, int(value)))
        elif _TYPE.match(value):
            values.append((key, value))
        else:
            return DirectiveError(line, f"`{key}={value}` in a `cudalens: launch` directive: expected an integer "
                                        "or a type name")
    return LaunchDirective(line, block, tuple(values))  # type: ignore[arg-type]
