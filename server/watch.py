"""Changes made outside the editor: headers included by open documents, reference `.py` files, pyproject.toml.

One non-recursive watchdog watch per folder of the workspace, skipping build, cache, virtualenv and hidden
folders (a recursive inotify watch would also cover `.venv` and `.git`: thousands of watches for nothing).
Events arrive on watchdog's thread, are filtered there, and reach the event loop debounced, as a set of paths.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from cudalens.analysis.file_kinds import CHECKED_SUFFIXES

logger = logging.getLogger("cudalens.server")

IGNORED_DIRS = frozenset(
    {"build", "dist", "__pycache__", "node_modules", "venv", "env", "site-packages", "target", "out", "_build"}
)
WATCHED_SUFFIXES = frozenset(CHECKED_SUFFIXES)
WATCHED_NAMES = frozenset({"pyproject.toml"})
MAX_WATCHED_DIRS = 5000
DEBOUNCE_S = 0.1


def ignored_dir(name: str) -> bool:
    return name.startswith(".") or name in IGNORED_DIRS or name.endswith(".egg-info")


def relevant_file(path: str) -> bool:
    # Only non-ignored folders are watched, so the folder needs no check here.
    p = Path(path)
    return p.suffix in WATCHED_SUFFIXES or p.name in WATCHED_NAMES


def watched_dirs(root: str, limit: int = MAX_WATCHED_DIRS) -> list[str]:
    found = []
    for folder, dirs, _files in os.walk(root):
        dirs[:] = [d for d in dirs if not ignored_dir(d)]
        found.append(folder)
        if len(found) >= limit:
            logger.warning("watching only the first %d folders under %s", limit, root)
            break
    return found


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: WorkspaceWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [os.fsdecode(event.src_path)]
        if getattr(event, "dest_path", None):
            paths.append(os.fsdecode(event.dest_path))
        if event.is_directory:
            if event.event_type in ("created", "moved") and not ignored_dir(Path(paths[-1]).name):
                self.watcher.add_tree(paths[-1])
            return
        for path in paths:
            if relevant_file(path):
                self.watcher.notice(path)


class WorkspaceWatcher:
    def __init__(
        self, loop: asyncio.AbstractEventLoop, on_changes: Callable[[set[str]], None], debounce_s: float = DEBOUNCE_S
    ) -> None:
        self._loop = loop
        self._on_changes = on_changes
        self._debounce_s = debounce_s
        self._observer = Observer()
        self._observer.daemon = True
        self._handler = _Handler(self)
        self._watched: set[str] = set()
        self._pending: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self.started = False

    def start(self, roots: list[str]) -> None:
        """Folders given to `watch_folder` before this are watched from here on too."""
        for root in roots:
            self.add_tree(root)
        self._observer.start()
        self.started = True
        logger.info("watching %d folders for outside changes", len(self._watched))

    def add_tree(self, root: str) -> None:
        if not os.path.isdir(root):
            return
        for folder in watched_dirs(root, MAX_WATCHED_DIRS - len(self._watched)):
            self.watch_folder(folder)

    def watch_folder(self, folder: str) -> None:
        """One folder, not its subfolders: the folder of a file opened outside the workspace folders."""
        if folder in self._watched or not os.path.isdir(folder) or len(self._watched) >= MAX_WATCHED_DIRS:
            return
        try:
            self._observer.schedule(self._handler, folder, recursive=False)
        except OSError as exc:  # inotify watch limit, permissions, a folder gone meanwhile
            logger.warning("cannot watch %s: %s", folder, exc)
            return
        self._watched.add(folder)

    def notice(self, path: str) -> None:
        """From watchdog's thread."""
        try:
            self._loop.call_soon_threadsafe(self._add_pending, os.path.realpath(path))
        except RuntimeError:
            pass  # the loop is closed

    def _add_pending(self, path: str) -> None:
        self._pending.add(path)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_later(self._debounce_s, self._flush)

    def _flush(self) -> None:
        paths, self._pending, self._timer = self._pending, set(), None
        if paths:
            self._on_changes(paths)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.started:
            self._observer.stop()
            self.started = False
