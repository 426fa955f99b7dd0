"""Which keys a workspace source — `[tool.cudalens]` in a repository's pyproject.toml — may set.

A repository is not the user. Its configuration may choose rules and display (which codes, severities, paths to
skip, where headers are, the target architecture); it may never choose a program to run (nvcc, ncu, a Python),
where the Coder sends the user's key and code (its endpoint, the variable that holds the key), or turn on running
code (compile/test/profile on save). Those are the user's own settings: the editor's user settings, the client's
initializationOptions, or the command line. docs/security.md has the table.

`workspace_refusal` is the one place that says so; the config loaders (server and CLI) call it for every key.
"""

from __future__ import annotations

import re

# The first part of a key (snake_case) that only the user may set → why.
_CODER = "would choose where the Coder sends your API key and code"
_PROGRAM = "names a program to run"
_RUNS = "would turn on running code"
_USERS_ONLY = {
    "coder": _CODER, "base_url": _CODER, "api_key_env": _CODER, "api_key": _CODER, "endpoint": _CODER,
    "path": _PROGRAM, "interpreter": _PROGRAM, "python": _PROGRAM, "worker": _PROGRAM, "nvcc": _PROGRAM,
    "ncu": _PROGRAM, "compute_sanitizer": _PROGRAM, "sanitizer": _PROGRAM, "ccbin": _PROGRAM,
    "on_save": _RUNS, "optimize": _RUNS, "trust": _RUNS,
}
# Words that, anywhere in a key, name a program, its arguments or a secret's whereabouts.
_SUSPECT_WORDS = {"python", "nvcc", "ncu", "interpreter", "executable", "exe", "bin", "bindir", "cmd", "command",
                  "flags", "args", "env", "url", "key", "sanitizer"}

WHERE = ("set it in your editor's user settings (`cudalens.*`) or on the command line, where you choose it, "
         "not the repository")


def _words(key: str) -> list[str]:
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).replace("-", "_").lower()
    return [w for w in re.split(r"[._]", snake) if w]


def workspace_refusal(key: str, source: str = "[tool.cudalens]") -> str | None:
    """The one-line message when `source` may not set `key` (any spelling: kebab, snake, camel, dotted), else
    None — the key may be a rule or display setting, or simply unknown (the caller says so)."""
    words = _words(key)
    first = "_".join(words[:3])
    reason = next((_USERS_ONLY[k] for k in (first, "_".join(words[:2]), *words[:1]) if k in _USERS_ONLY), None)
    if reason is None and _SUSPECT_WORDS.intersection(words):
        reason = _PROGRAM if not {"url", "key", "env"}.intersection(words) else _CODER
    if reason is None:
        return None
    return f"cudalens: {source} may not set '{key}': it {reason}; {WHERE}. Ignored"
