"""The analyzer's memo tables: module-level dicts that remember results across edits (keyed by the text they
read) and start again when full, so a long session's memory stays bounded."""

from __future__ import annotations

from typing import TypeVar

V = TypeVar("V")


def remember(cache: dict, key: object, value: V, limit: int) -> V:
    """`value`, kept under `key`; a cache holding `limit` entries is emptied first."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value
