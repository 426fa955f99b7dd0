"""Changes made outside the editor re-check the open documents that depend on them."""

from __future__ import annotations

import asyncio

from lsptools import codes, diagnostics_for, kernel, open_doc, start, wait_until
from pytest_lsp import LanguageClient

from cudalens.server.watch import WorkspaceWatcher

MAIN = '#include "tile.cuh"\n\n' + kernel("strided.cu")


def rechecks(client: LanguageClient, uri: str, after: int):
    return [p for p in client.published[after:] if p.uri == uri and p.version == 1]


async def test_changing_an_included_header_on_disk_rechecks_the_open_file(client: LanguageClient):
    # The tile's row length comes from the header: 32 floats conflict, 33 do not.
    (client.root / "src").mkdir()
    header = client.root / "src" / "tile.cuh"
    header.write_text("#define TILE_COLS 32\n")
    text = '#include "tile.cuh"\n' + kernel("bank_conflict.cu").replace("tile[32][32]", "tile[32][TILE_COLS]")
    uri = open_doc(client, client.root / "src" / "main.cu", text)
    assert "CL301" in codes(await diagnostics_for(client, uri, 1))
    seen = len(client.published)
    header.write_text("#define TILE_COLS 33\n")
    again = await wait_until(lambda: rechecks(client, uri, seen), "a re-check after the header changed")
    assert "CL301" not in codes(again[-1].diagnostics)
    assert any("tile.cuh changed" in m.message for m in client.log_messages)


async def test_unrelated_and_ignored_files_do_not_recheck(client: LanguageClient):
    (client.root / "src").mkdir()
    (client.root / "src" / "tile.cuh").write_text("#define TILE 32\n")
    (client.root / "build").mkdir()
    uri = open_doc(client, client.root / "src" / "main.cu", MAIN)
    await diagnostics_for(client, uri, 1)
    seen = len(client.published)
    (client.root / "build" / "tile.cuh").write_text("#define TILE 8\n")
    (client.root / "src" / "notes.txt").write_text("hello\n")
    (client.root / "src" / "other.cuh").write_text("#define OTHER 1\n")
    # a change that does re-check, to know the ones before it have been handled
    (client.root / "src" / "tile.cuh").write_text("#define TILE 16\n")
    await wait_until(lambda: rechecks(client, uri, seen), "the re-check")
    reasons = [m.message for m in client.log_messages if "re-checking" in m.message]
    assert reasons and all("tile.cuh changed" in r for r in reasons), reasons


async def test_pyproject_change_rechecks_with_the_new_config(client: LanguageClient):
    (client.root / "src").mkdir()
    (client.root / "src" / "tile.cuh").write_text("\n")
    uri = open_doc(client, client.root / "src" / "main.cu", MAIN)
    assert "CL101" in codes(await diagnostics_for(client, uri, 1))
    seen = len(client.published)
    (client.root / "pyproject.toml").write_text('[tool.cudalens]\nignore = ["CL101"]\n')
    again = await wait_until(
        lambda: [p for p in rechecks(client, uri, seen) if "CL101" not in codes(p.diagnostics)],
        "a re-check under the new pyproject.toml",
    )
    assert again


async def test_headers_next_to_a_file_outside_the_workspace_are_watched(bare_client: LanguageClient):
    workspace, elsewhere = bare_client.root / "workspace", bare_client.root / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    await start(bare_client, workspace)
    header = elsewhere / "tile.cuh"
    header.write_text("#define TILE_COLS 32\n")
    text = '#include "tile.cuh"\n' + kernel("bank_conflict.cu").replace("tile[32][32]", "tile[32][TILE_COLS]")
    uri = open_doc(bare_client, elsewhere / "main.cu", text)
    assert "CL301" in codes(await diagnostics_for(bare_client, uri, 1))
    seen = len(bare_client.published)
    header.write_text("#define TILE_COLS 33\n")
    again = await wait_until(lambda: rechecks(bare_client, uri, seen), "a re-check after the header changed")
    assert "CL301" not in codes(again[-1].diagnostics)


async def test_a_folder_watched_before_the_watcher_starts_is_watched_once_it_starts(tmp_path):
    # VS Code sends didOpen right after `initialized`, whose async handler may run after it: the folder of a file
    # opened then (outside the workspace) is given to the watcher before it starts, and must not be lost.
    changed: asyncio.Queue[set[str]] = asyncio.Queue()
    watcher = WorkspaceWatcher(asyncio.get_running_loop(), changed.put_nowait, debounce_s=0.01)
    (tmp_path / "workspace").mkdir()
    (tmp_path / "elsewhere").mkdir()
    watcher.watch_folder(str(tmp_path / "elsewhere"))
    watcher.start([str(tmp_path / "workspace")])
    try:
        (tmp_path / "elsewhere" / "tile.cuh").write_text("#define TILE 32\n")
        paths = await asyncio.wait_for(changed.get(), 30)
    finally:
        watcher.stop()
    assert str((tmp_path / "elsewhere" / "tile.cuh").resolve()) in paths
