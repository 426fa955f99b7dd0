"""End to end in a real VS Code: code-server 4.139.1 runs the packaged extension against `cudalens serve`, and
playwright-core drives it in Debian's chromium like a person: open a .cu file, read the Problems panel, apply a
quick fix, store an API key, run "cudalens: Optimize kernel" against a local OpenAI-compatible stub.

The first run installs code-server, Node 24 and chromium into ~/.cache/cudalens-e2e (several minutes); the test
skips, saying why, when that install cannot be done. Screenshots and logs land in tests/vscode/artifacts/{trusted,restricted}/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.fake_openai import FakeOpenAI, reply
from tests.vscode.code_server import CHROMIUM, CodeServer, InstallFailed, install

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2700)]

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
ARTIFACTS = HERE / "artifacts"
# The interpreter that runs `python -m cudalens serve`; this one has cudalens installed.
SERVER_PYTHON = os.environ.get("CUDALENS_E2E_PYTHON", sys.executable)
API_KEY = "sk-e2e-from-secret-storage"
# The Coder's canned answer: the KernelBench file back with a coalesced kernel, in one python fence.
NAIVE_BODY = """    int r = blockIdx.x * blockDim.x + threadIdx.x;
    for (int c = 0; c < cols; ++c) {
        out[r * cols + c] = 2.0f * in[r * cols + c];
    }"""
COALESCED_BODY = """    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) out[i] = 2.0f * in[i];"""
CODER_REPLY = "```python\n" + (FIXTURES / "relu_model.py").read_text().replace(NAIVE_BODY, COALESCED_BODY) + "```\n"


@pytest.fixture(scope="module")
def installation():
    probe = subprocess.run([SERVER_PYTHON, "-c", "import cudalens.server.main"], capture_output=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip(f"{SERVER_PYTHON} has no cudalens language server (cudalens.server.main) to run VS Code against")
    try:
        return install()
    except InstallFailed as exc:
        pytest.skip(f"code-server could not be installed here: {exc}")


def _workspace(root: Path) -> Path:
    ws = root / "workspace"
    (ws / ".vscode").mkdir(parents=True)
    shutil.copy(FIXTURES / "transpose.cu", ws / "transpose.cu")
    shutil.copy(FIXTURES / "relu_model.py", ws / "relu_model.py")
    settings = {
        "cudalens.interpreter": [SERVER_PYTHON],
        "cudalens.coder.model": "stub-coder",
        "cudalens.optimize.rounds": 1,
        "cudalens.logLevel": "debug",
    }
    (ws / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2))
    return ws


def _user_settings(coder_url: str) -> dict:
    """The Coder's endpoint and key variable are the user's own (machine scope): the Remote tab's settings."""
    return {"cudalens.coder.baseUrl": coder_url, "cudalens.coder.apiKeyEnv": "CUDALENS_E2E_KEY"}


def _drive(installation, server: CodeServer, folder: Path, config: dict, tmp_path: Path) -> tuple[dict, str]:
    """Starts code-server on `folder`, runs the driver with `config`, keeps the artifacts; (result, what it saw)."""
    try:
        config["url"] = server.start(folder)
        config["session"] = server.process.pid
        (tmp_path / "driver.json").write_text(json.dumps(config))
        drive = subprocess.run(
            [str(installation.node_bin / "node"), str(Path(config["compiledTests"]) / "e2e" / "driver.js"),
             str(tmp_path / "driver.json")],
            cwd=Path(config["compiledTests"]).parent, capture_output=True, text=True, timeout=1200,
        )
    finally:
        server.stop()
        _keep_artifacts(tmp_path, server, ARTIFACTS / config.get("mode", "trusted"))
    result = json.loads((ARTIFACTS / config.get("mode", "trusted") / "result.json").read_text())
    seen = f"steps: {result['steps']}\nnotifications: {result['notifications']}\n{drive.stdout[-3000:]}"
    assert drive.returncode == 0, drive.stderr[-3000:]
    assert result.get("error") is None, f"{result['error']}\n{seen}"
    return result, seen


def _keep_artifacts(home: Path, server: CodeServer, out: Path) -> None:
    """Screenshots, the driver's result, code-server's log and VS Code's logs (the cudalens output among them)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for item in (home / "driver").glob("*"):
        shutil.copy(item, out / item.name)
    (out / "code-server.log").write_text(server.log())
    logs = server.user_data / "logs"
    if logs.is_dir():
        shutil.copytree(logs, out / "vscode-logs")


def test_extension_in_code_server(installation, extension_dir: Path, compiled_tests: Path, tmp_path: Path) -> None:
    # Each round asks once; a few rounds' worth of the same answer.
    with FakeOpenAI([reply(CODER_REPLY) for _ in range(5)], model="stub-coder") as coder:
        ws = _workspace(tmp_path)
        # The key reaches the server only through "cudalens: Set API key": the variable is not in the environment.
        env = {k: v for k, v in os.environ.items() if k not in ("CUDALENS_E2E_KEY", "CUDALENS_API_KEY")}
        server = CodeServer(installation, tmp_path / "code-server", env, machine_settings=_user_settings(coder.base_url))
        server.install_extension(extension_dir / "dist" / "cudalens.vsix")
        config = {
            "compiledTests": str(compiled_tests),
            "file": "transpose.cu",
            "artifacts": str(tmp_path / "driver"),
            # The naive transpose's store: CL101 (uncoalesced) or the more specific CL103 (transpose through global).
            "expectCodes": ["CL10", "CL301"],
            "quickFixLine": 20,
            "quickFixColumn": 24,
            "quickFixTitle": "Pad the rows",
            "pythonFile": "relu_model.py",
            "pythonCode": "CL101",
            "apiKey": API_KEY,
            # KernelBench's shape (Model, ModelNew, get_inputs) is what the optimizer works on.
            "optimizeFile": "relu_model.py",
            "optimizeLine": 9,
            # The server's last word on the run: not wired yet, a result, or a failure it reports.
            "optimizeFinal": "not available yet|no faster correct candidate|faster|failed|cancelled",
            "optimizeTimeoutMs": 900_000,
            "chromium": str(CHROMIUM),
            "timeoutMs": 90_000,
        }
        result, seen = _drive(installation, server, ws, config, tmp_path)
        artifacts = ARTIFACTS / "trusted"

        # Diagnostics in the Problems panel, with their codes, from the real server: in the .cu file, and inside
        # the CUDA string of the Python file at the right line.
        problems = result["problems"]
        assert any(re.search(r"store to `out`.*CL10\d \[Ln 8, Col 9\]", p) for p in problems), problems
        assert any(re.search(r"bank conflict.*CL301 \[Ln 20, Col 24\]", p) for p in problems), problems
        in_python = result["problemsWithPython"]
        assert any(re.search(r"`cols` elements apart.*CL101 \[Ln 10, Col 9\]", p) for p in in_python), in_python
        assert (artifacts / "editor.png").stat().st_size > 10_000

        # The quick fix went through VS Code's own edit and save: the file on disk is padded.
        assert any("Pad the rows" in fix for fix in result["quickFixes"]), result["quickFixes"]
        fixed = (ws / "transpose.cu").read_text()
        assert "__shared__ float tile[32][33];" in fixed and "[32][32]" not in fixed

        # A killed server was replaced by a new one (the errorHandler's restart with back-off).
        assert result["killedServer"] and result["restartedServer"], seen
        output = "\n".join(p.read_text() for p in (artifacts / "vscode-logs").rglob("*cudalens*.log"))
        assert "the server exited; restarting it in 1 s" in output, output[-3000:]

        # Optimize reached the server and VS Code showed the server's answer.
        assert any("cudalens" in item for item in result["statusBar"]), result["statusBar"]
        answers = [n for n in result["notifications"] if not n.startswith("cudalens: Optimizing")]
        assert answers, seen
        if any("not available yet" in n for n in answers):
            # A server without the optimizer (cudalens.server.commands answers so): nothing more to see.
            assert not coder.requests
            return
        # The server reached the Coder, with the key that went in through VS Code's secret storage.
        assert coder.requests, f"the Coder endpoint was never called\n{seen}"
        assert coder.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
        assert coder.requests[0].body["model"] == "stub-coder"
        assert "scale_rows" in coder.requests[0].prompt
        assert any(re.search(r"scale_rows.*(faster|no faster correct candidate)", n) for n in answers), answers


def test_a_restricted_window_gets_static_hints_only(
    installation, extension_dir: Path, compiled_tests: Path, tmp_path: Path
) -> None:
    """The attacker's repository of tests/security opened in Restricted Mode (workspace trust on, not granted):
    the hints are there; its `.tools/python` never runs (no marker), its endpoint gets no request, and a kernel
    command answers that the workspace is not trusted."""
    from tests.security.test_workspace_trust import SECRET, SECRET_ENV, attacker_repository

    with FakeOpenAI([reply("never asked")], model="stub-coder") as coder:
        ws = tmp_path / "repo"
        attacker_repository(ws, coder.base_url)
        shutil.copy(FIXTURES / "transpose.cu", ws / "transpose.cu")
        env = {**os.environ, SECRET_ENV: SECRET}
        server = CodeServer(installation, tmp_path / "code-server", env, trust=True,
                            machine_settings={"cudalens.interpreter": [SERVER_PYTHON], "cudalens.logLevel": "debug"})
        server.install_extension(extension_dir / "dist" / "cudalens.vsix")
        config = {
            "compiledTests": str(compiled_tests), "mode": "restricted", "file": "transpose.cu",
            "artifacts": str(tmp_path / "driver"), "expectCodes": ["CL10"], "quickFixLine": 20,
            "runCommand": "cudalens: Run tests", "chromium": str(CHROMIUM), "timeoutMs": 90_000,
        }
        result, seen = _drive(installation, server, ws, config, tmp_path)
        artifacts = ARTIFACTS / "restricted"
        assert any("CL10" in p for p in result["problems"]), seen
        assert any("not trusted" in n for n in result["notifications"]), seen
        assert result["servers"] and all(".tools" not in argv for argv in result["servers"]), result["servers"]
        assert not (ws / "MARKER").exists(), (ws / "MARKER").read_text()
        assert coder.requests == []
        output = "\n".join(p.read_text() for p in (artifacts / "vscode-logs").rglob("*cudalens*.log"))
        assert "Restricted Mode: static hints only" in output, output[-3000:]
        assert SECRET not in output
