"""Content-addressed cache of build results: the same source, headers, flags and compiler cost nothing twice.

A key is the SHA-256 of everything that can change the output; an entry is a folder named by the key holding
`result.json` (what the caller stores) and any artefacts (a cubin). The cache lives in
`$XDG_CACHE_HOME/cudalens/builds` (`~/.cache/cudalens/builds`), or where `CUDALENS_CACHE_DIR` says. Entries are
written to a temporary folder and renamed into place, so a reader never sees half an entry and two processes
compiling the same kernel at once do not corrupt each other.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from cudalens.workspace.user_cache import cache_home


def cache_key(*parts: str | bytes) -> str:
    """A key over ordered parts; each part is length-prefixed so ("ab", "c") and ("a", "bc") differ."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", errors="surrogatepass") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


class BuildCache:
    def __init__(self, root: str | Path | None = None, kind: str = "builds") -> None:
        self.root = Path(root) if root is not None else cache_home() / kind

    def entry_dir(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> dict | None:
        """The stored result, or None (also for a damaged entry, which is then removed)."""
        path = self.entry_dir(key) / "result.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            shutil.rmtree(self.entry_dir(key), ignore_errors=True)
            return None

    def put(self, key: str, result: dict, artefacts: dict[str, Path] | None = None) -> Path:
        """Store `result` and copies of `artefacts` (name → file); returns the entry's folder."""
        final = self.entry_dir(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key[:8]}-", dir=final.parent))
        try:
            for name, source in (artefacts or {}).items():
                if source.is_file():
                    shutil.copyfile(source, staging / name)
            (staging / "result.json").write_text(json.dumps(result), encoding="utf-8")
            try:
                os.rename(staging, final)
            except OSError:  # another process stored the same entry first: theirs is as good
                shutil.rmtree(staging, ignore_errors=True)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return final
