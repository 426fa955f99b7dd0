"""A didChange whose range is inverted (end before start) or past the last line: pygls 2.1.1 applied it without a
word and garbled the line (`out[x * n + y] = in[y * n + x] * s;` became `out[x * n + Xx * n + y] = in[y * n +
x] * s;`, a text the editor never had), so every later position and offered edit was off. Now it is refused with a logged error, the
last good text is kept, and no edit is offered on that document until the editor sends its whole text again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from lsptools import RawConnection, kernel, raw_fixture  # noqa: F401 - the `raw` fixture

# The attacker's (or a buggy client's) changes: line 5 is `        out[x * n + y] = in[y * n + x] * s;`
INVERTED = {"range": {"start": {"line": 5, "character": 20}, "end": {"line": 5, "character": 12}}, "text": "X"}
PAST_THE_END = {"range": {"start": {"line": 400, "character": 0}, "end": {"line": 401, "character": 0}}, "text": "X"}




def actions(raw: RawConnection, uri: str, diagnostic: dict):
    return raw.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diagnostic["range"],
                                                   "context": {"diagnostics": [diagnostic]}})["result"]


@pytest.mark.parametrize("bad", [INVERTED, PAST_THE_END], ids=["inverted", "past the end"])
def test_a_change_that_does_not_fit_is_refused_and_the_text_kept(raw: RawConnection, tmp_path, bad):
    text = kernel("strided.cu")
    uri = raw.open(tmp_path / "k.cu", text)
    [diagnostic] = raw.diagnostics(uri, 1)
    assert actions(raw, uri, diagnostic)
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [bad]})
    logged = next(m for m in iter(raw.receive, None)
                  if m.get("method") == "window/logMessage" and "ignoring the change" in m["params"]["message"])
    assert logged["params"]["type"] == 1  # an error
    assert actions(raw, uri, diagnostic) is None  # the server's copy may not be the editor's: no edits offered
    hover = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 20}})
    assert "scale_columns" in str(hover["result"])  # the last good text is still served
    # the whole text again: in step once more
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": text}]})
    [again] = raw.diagnostics(uri, 3)
    assert again["range"] == diagnostic["range"] and actions(raw, uri, again)
    assert "Traceback" not in raw.stderr_text()
