"""pytest-lsp drives the real server (`python -m cudalens.server`) over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from pytest_lsp import LanguageClient

# The tests import their helpers from lsptools.py next to this file.
sys.path.insert(0, str(Path(__file__).parent))

from lsptools import CONFIG, start


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """A server whose workspace is an empty tmp folder; `client.root` is that folder."""
    lsp_client.root = tmp_path
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()




@pytest_lsp.fixture(config=CONFIG)
async def bare_client(lsp_client: LanguageClient, tmp_path: Path):
    """A started server not yet initialized: the test calls `start(client, root, options)` itself."""
    lsp_client.root = tmp_path
    yield
    if not lsp_client.stopped:  # the test may have shut it down itself
        await lsp_client.shutdown_session()
