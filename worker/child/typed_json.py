"""JSON values checked against the types a dataclass declares: the one coercion of cudalens.

`coerce(value, hint, field)` turns a JSON value into the field's type or raises `TypeMismatch` with the words for what
was expected ("a whole number from 0 to 20"). The worker protocol (protocol.py) uses it strictly — a mismatch is a
malformed message — and the settings (server/settings.py, the Coder's and the loop's schemas) leniently — a
mismatch is shown once and the default kept. `setting()` declares a settings field: its default, range, words and
where VS Code may set it; settings_export.py turns those into package.json and the docs' tables.

Standard library only, and nothing else of ours: the worker loads this file by path (beside protocol.py) under an
interpreter that may lack cudalens. Why not cattrs: its hooks for the leaf types convert rather than check —
`"false"` structures as True, `3.7` as 3, `5` as `"5"` — and the worker could not import it anyway.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, Literal

# Field metadata keys (dataclasses.field(metadata=...)).
RANGE = "range"  # (lowest, highest) accepted number
DOC = "doc"  # one or two sentences of Markdown: what the setting does (package.json, the docs' tables)
SCOPE = "scope"  # VS Code's configuration scope: "resource" (per folder), "machine", "machine-overridable", ...
RESTRICTED = "restricted"  # runs a program or turns on running code: user settings only in Restricted Mode
UNSET = "unset"  # what an empty value means, for a setting the editor leaves empty ("the server's Python")

Scope = Literal["application", "machine", "machine-overridable", "window", "resource", "language-overridable"]


class TypeMismatch(ValueError):
    """`value` is not of the declared type; `expected` says what would be ("true or false")."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


def setting(
    default: Any = dataclasses.MISSING,
    *,
    doc: str,
    range: tuple[float, float] | None = None,
    scope: Scope = "window",
    restricted: bool = False,
    unset: str | None = None,
    default_factory: Any = dataclasses.MISSING,
) -> Any:
    """A settings field with its documentation. `range`: out of range is a bad value (shown, default used) — an
    absurd `debounceMs` or timeout would otherwise mean results that never arrive. `unset`: the words for what
    an empty value means (a field whose default is None, or depends on the machine)."""
    metadata: dict[str, Any] = {DOC: doc, SCOPE: scope, RESTRICTED: restricted}
    if range is not None:
        metadata[RANGE] = range
    if unset is not None:
        metadata[UNSET] = unset
    return dataclasses.field(default=default, default_factory=default_factory, metadata=metadata)


def value_range(f: dataclasses.Field | None) -> tuple[float, float] | None:
    return None if f is None else f.metadata.get(RANGE)


def field_hints(cls: type) -> dict[str, tuple[dataclasses.Field, Any]]:
    """Each field of the dataclass `cls` with its resolved type, in declaration order (cached)."""
    cached = _HINTS.get(cls)
    if cached is None:
        hints = typing.get_type_hints(cls)
        cached = _HINTS[cls] = {f.name: (f, hints[f.name]) for f in dataclasses.fields(cls)}
    return cached


_HINTS: dict[type, dict[str, tuple[dataclasses.Field, Any]]] = {}


def optional(hint: Any) -> tuple[Any, bool]:
    """(`X`, True) for `X | None`, else (hint, False)."""
    args = typing.get_args(hint)
    if type(None) in args and _is_union(hint):
        rest = tuple(a for a in args if a is not type(None))
        return (rest[0] if len(rest) == 1 else typing.Union[rest]), True  # noqa: UP007 (a runtime union)
    return hint, False


def choices(hint: Any) -> tuple[Any, ...] | None:
    """The values of a `Literal[...]` type, else None."""
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else None


def is_string_list(hint: Any) -> bool:
    return typing.get_origin(hint) in (tuple, list) and typing.get_args(hint)[:1] == (str,)


def coerce(value: Any, hint: Any, f: dataclasses.Field | None = None) -> Any:
    """`value` as the type `hint` (bool, int, float, str, dict, `tuple[str, ...]`, `Literal[...]`, `X | None`),
    within the field's range when it declares one. Raises `TypeMismatch`."""
    inner, nullable = optional(hint)
    if value is None:
        if nullable:
            return None
        raise TypeMismatch(expected(hint, f))
    if choices(inner) is not None:
        if isinstance(value, str) and value in choices(inner):
            return value
    elif inner is bool:
        if isinstance(value, bool):
            return value
    elif inner in (int, float):
        number = _number(value, whole=inner is int, bounds=value_range(f))
        if number is not None:
            return number
    elif inner is str:
        if isinstance(value, str):
            return value
    elif inner is dict:
        if isinstance(value, dict):
            return value
    elif is_string_list(inner):
        items = [value] if isinstance(value, str) else value  # one code is a list of one
        if isinstance(items, (list, tuple)) and all(isinstance(v, str) for v in items):
            return tuple(items)
    else:
        raise TypeError(f"typed_json cannot check values of type {hint!r}")
    raise TypeMismatch(expected(hint, f))


def _number(value: Any, whole: bool, bounds: tuple[float, float] | None) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if whole and not (isinstance(value, int) or value.is_integer()):  # NaN and ±inf are not integers
        return None
    if bounds is not None and not bounds[0] <= value <= bounds[1]:  # NaN fails this too
        return None
    return int(value) if whole else float(value)


def expected(hint: Any, f: dataclasses.Field | None = None) -> str:
    """What `coerce` accepts for `hint`, in words."""
    inner, _ = optional(hint)
    if choices(inner) is not None:
        words = "one of " + ", ".join(map(str, choices(inner)))
    elif inner is bool:
        words = "true or false"
    elif inner in (int, float):
        words = "a whole number" if inner is int else "a number"
        bounds = value_range(f)
        if bounds is not None:
            words += " " + number_words(*bounds)
    elif inner is str:
        words = "a string"
    elif inner is dict:
        words = "an object"
    elif is_string_list(inner):
        words = "a list of strings"
    else:
        words = repr(inner)
    return words  # None is accepted where the type allows it, and never worth a word: it means "unset"


def number_words(low: float, high: float) -> str:
    def show(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else str(x)

    return f"from {show(low)} to {show(high)}" if high != math.inf else f"≥ {show(low)}"


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)
