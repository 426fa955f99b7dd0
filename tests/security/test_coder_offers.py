"""An Ask Coder reply must become a valid file (offers.py, edit_check.py). With a whole-file reply, the offered
diff used to replace the kernel's lines inside the CUDA string of examples/kernelbench_row_sum.py with the whole
Python module (a file that no longer builds); now a whole-file reply replaces the whole file, and a reply that
would leave a file that does not parse is refused with a message, never offered."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from lsprotocol import types
from lsptools import RawConnection, lsp_offset

from cudalens.analysis.syntax_check import SyntaxBaseline
from tests.agents.fake_openai import FakeOpenAI, reply

KEY_ENV = "CUDALENS_SECURITY_TEST_CODER_KEY"
EXAMPLE = (Path(__file__).parents[2] / "examples" / "kernelbench_row_sum.py").read_text()
# The Coder's answer: the whole module again, with one warp per row (the attacker here is only a model's habit).
WHOLE_FILE = EXAMPLE.replace("""    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c) {
            acc += x[row * cols + c];
        }
        out[row] = acc;
    }""", """    int row = blockIdx.x;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) {
        acc += x[row * cols + c];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        acc += __shfl_down_sync(0xffffffff, acc, offset);
    }
    if (threadIdx.x == 0) {
        out[row] = acc;
    }""").replace("row_sum_kernel<<<(rows + threads - 1) / threads, threads>>>", "row_sum_kernel<<<rows, 32>>>")
# A kernel that does not parse (an unclosed brace): replacing the kernel's lines with it breaks the CUDA string.
BROKEN_KERNEL = """__global__ void row_sum_kernel(const float* x, float* out, int rows, int cols) {
    int row = blockIdx.x;
    if (row < rows) {
        out[row] = x[row * cols];
}
"""


@pytest.fixture
def coder(tmp_path):
    with FakeOpenAI() as fake:
        os.environ[KEY_ENV] = "sk-security-test"
        conn = RawConnection()
        conn.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(),
            "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True}, "applyEdit": True}},
            "initializationOptions": {"settings": {"onSave": {"compile": False}, "coder": {
                "baseUrl": fake.base_url, "model": "fake", "apiKeyEnv": KEY_ENV}}}}})
        conn.response_to(1)
        conn.notify("initialized", {})
        yield conn, fake
        conn.kill()


def ask(conn: RawConnection, fake: FakeOpenAI, root: Path, content: str) -> dict:
    """Ask Coder about the uncoalesced load of the example, which the Coder answers with `content`."""
    fake.script = [reply(content)]
    uri = conn.open(root / "kernelbench_row_sum.py", EXAMPLE, language="python")
    conn.diagnostics(uri, 1)
    line = EXAMPLE.splitlines().index("            acc += x[row * cols + c];")
    rng = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}
    command = {"command": "cudalens.askCoder", "arguments": [uri, rng, "CL101"]}
    return conn.request("workspace/executeCommand", command)["result"]


def test_a_whole_file_reply_replaces_the_whole_file(coder, tmp_path):
    conn, fake = coder
    answer = ask(conn, fake, tmp_path, f"One warp per row reads consecutive columns.\n\n```python\n{WHOLE_FILE}```\n")
    assert answer["ok"] is True and answer["resultId"], answer
    conn.send({"jsonrpc": "2.0", "id": 77, "method": "workspace/executeCommand",
               "params": {"command": "cudalens.applyOptimization", "arguments": [answer["resultId"]]}})
    request = next(m for m in iter(conn.receive, None) if m.get("method") == "workspace/applyEdit")
    conn.send({"jsonrpc": "2.0", "id": request["id"], "result": {"applied": True}})
    assert conn.response_to(77)["result"]["ok"] is True
    [edit] = request["params"]["edit"]["documentChanges"][0]["edits"]
    start = lsp_offset(EXAMPLE, types.Position(**edit["range"]["start"]))
    end = lsp_offset(EXAMPLE, types.Position(**edit["range"]["end"]))
    after = EXAMPLE[:start] + edit["newText"] + EXAMPLE[end:]
    assert after == WHOLE_FILE  # not the module pasted into the CUDA string
    assert after.count("class ModelNew") == 1 and SyntaxBaseline(after, "/k.py").errors == 0


def test_a_reply_that_breaks_the_file_is_refused_with_a_message(coder, tmp_path):
    conn, fake = coder
    answer = ask(conn, fake, tmp_path, f"Here is the kernel.\n\n```cuda\n{BROKEN_KERNEL}```\n")
    assert answer["ok"] is False and not answer.get("resultId") and "would not parse" in answer["message"]
    shown = [m["params"]["message"] for m in conn.received if m.get("method") == "window/showMessage"]
    assert any("is not offered" in m for m in shown), shown
