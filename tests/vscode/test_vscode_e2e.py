"""End to end in a real VS Code: code-server 4.139.1 runs the packaged extension against `cudalens serve`, and
playwright-core drives it in Debian's chromium like a person.

The trusted walk is a newcomer's first ten minutes: a fresh profile, a folder with a `.venv` holding cudalens
and no `cudalens` on PATH; open a .cu file, read the Problems panel, apply a quick fix, store an API key, run
"cudalens: Optimize kernel" (here, without a GPU: refused with the reason before any request reaches the local
OpenAI-compatible stub; with a GPU: the stub is asked, with the stored key). The not-found walk has no server
anywhere and follows the error's "Open settings"; the restricted walk opens an attacker's repository untrusted;
the ask walk asks the Coder about a finding, reads its explanation, shows the diff and applies it; the everyday
walk trusts a clone's subfolder, reads the lenses and runs a lens's command (issue 38).

The first run installs code-server, Node 24 and chromium into ~/.cache/cudalens-e2e (several minutes); the test
skips, saying why, when that install cannot be done. Screenshots and logs land in
tests/vscode/artifacts/{trusted,notfound,restricted,ask,everyday}/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
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
    """A newcomer's folder: the kernels and a `.venv` with cudalens in it (this checkout's server, linked), no
    `.vscode/settings.json`."""
    ws = root / "workspace"
    (ws / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(FIXTURES / "transpose.cu", ws / "transpose.cu")
    shutil.copy(FIXTURES / "relu_model.py", ws / "relu_model.py")
    (ws / ".venv" / "bin" / "cudalens").symlink_to(Path(SERVER_PYTHON).parent / "cudalens")
    return ws


def _without_cudalens_on_path(env: dict[str, str]) -> dict[str, str]:
    folders = [p for p in env.get("PATH", "").split(os.pathsep) if p and not (Path(p) / "cudalens").exists()]
    return {**env, "PATH": os.pathsep.join(folders)}


def _has_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True, timeout=60).returncode == 0


def _user_settings(coder_url: str) -> dict:
    """The Coder's endpoint and key variable are the user's own (machine scope): the Remote tab's settings."""
    return {"cudalens.coder.baseUrl": coder_url, "cudalens.coder.apiKeyEnv": "CUDALENS_E2E_KEY",
            "cudalens.logLevel": "debug"}


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


def test_a_newcomer_in_code_server(installation, extension_dir: Path, compiled_tests: Path, tmp_path: Path) -> None:
    # Each round asks once; a few rounds' worth of the same answer (asked only where there is a GPU).
    with FakeOpenAI([reply(CODER_REPLY) for _ in range(5)], model="stub-coder") as coder:
        ws = _workspace(tmp_path)
        # The key reaches the server only through "cudalens: Set API key": the variable is not in the environment.
        env = {k: v for k, v in os.environ.items() if k not in ("CUDALENS_E2E_KEY", "CUDALENS_API_KEY")}
        env = _without_cudalens_on_path(env)
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
            "apiKeyEnv": "CUDALENS_E2E_KEY",
            # KernelBench's shape (Model, ModelNew, get_inputs) is what the optimizer works on.
            "optimizeFile": "relu_model.py",
            "optimizeLine": 9,
            # The server's last word on the run: refused for want of a GPU, a result, or a failure it reports.
            "optimizeFinal": "needs an NVIDIA GPU|no faster correct candidate|faster|failed|cancelled",
            "optimizeTimeoutMs": 900_000,
            "chromium": str(CHROMIUM),
            "timeoutMs": 90_000,
        }
        result, seen = _drive(installation, server, ws, config, tmp_path)
        artifacts = ARTIFACTS / "trusted"
        output = "\n".join(p.read_text() for p in (artifacts / "vscode-logs").rglob("*cudalens*.log"))

        # Found in the folder's .venv, with nothing set and no cudalens on PATH.
        assert f"starting {ws / '.venv' / 'bin' / 'cudalens'} serve (from .venv)" in output, output[-3000:]

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

        # A killed server was replaced by a new one (the errorHandler's restart with back-off), and the key stored
        # with "Set API key" was given to it.
        assert result["killedServer"] and result["restartedServer"], seen
        assert "the server exited; restarting it in 1 s" in output, output[-3000:]
        # ... went to it through its own pipe, never through its environment block (/proc/<pid>/environ)
        assert result["keyNotInEnvironment"] is True, seen
        assert output.count("the stored key came from the editor: $CUDALENS_E2E_KEY, $CUDALENS_API_KEY") >= 2, \
            output[-3000:]  # the first server's and the restarted one's
        assert API_KEY not in output

        # Optimize reached the server and VS Code showed the server's answer, once.
        assert any("cudalens" in item for item in result["statusBar"]), result["statusBar"]
        answers = [n for n in result["notifications"] if not n.startswith("cudalens: Optimizing")]
        assert answers, seen
        if not _has_gpu():
            refusal = [n for n in answers if "optimizing needs an NVIDIA GPU" in n]
            assert len(refusal) == 1 and "Nothing was sent to the Coder" in refusal[0], answers
            assert coder.requests == [], "a Coder request went out on a machine that cannot run a candidate"
            assert output.count("optimizing needs an NVIDIA GPU") == 1, output[-3000:]  # in the output too, once
            assert (artifacts / "optimize.png").stat().st_size > 10_000  # the answer over the output: docs/images/
            return
        # The server reached the Coder, with the key that went in through VS Code's secret storage.
        assert coder.requests, f"the Coder endpoint was never called\n{seen}"
        assert coder.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
        assert coder.requests[0].body["model"] == "o3"
        assert "scale_rows" in coder.requests[0].prompt
        assert any(re.search(r"scale_rows.*(faster|no faster correct candidate)", n) for n in answers), answers


NAIVE_STORE = "        out[x * n + y] = in[y * n + x];\n"
COALESCED_STORE = "        out[y * n + x] = in[x * n + y];\n"
EXPLANATION = ("Each thread of a warp writes `out` `n` floats apart: 32 transactions per store.\n"
               "Swap the indices so that neighbouring threads write neighbouring floats.")
AFTERWORD = "The reads become strided instead; stage a tile in shared memory to make both coalesced."


def test_ask_coder_explains_shows_the_diff_and_applies(
    installation, extension_dir: Path, compiled_tests: Path, tmp_path: Path
) -> None:
    """"Ask Coder about this" on the uncoalesced store: the Coder's explanation (its words before and after the
    code) is in the notification that offers the edit and in the cudalens output; "Show diff" opens VS Code's
    diff editor (not a .diff file); "Apply" changes the kernel's one line and leaves the rest of the file
    byte-identical, though the reply's code block ends with an empty line."""
    original = (FIXTURES / "transpose.cu").read_text()
    kernel = original[original.index("__global__ void transpose_naive"):original.index("}\n\n") + 2]
    block = kernel.replace(NAIVE_STORE, COALESCED_STORE) + "\n"  # ends with an empty line
    with FakeOpenAI([reply(f"{EXPLANATION}\n\n```cuda\n{block}```\n\n{AFTERWORD}\n")], model="stub-coder") as coder:
        ws = _workspace(tmp_path)
        server = CodeServer(installation, tmp_path / "code-server", _without_cudalens_on_path(dict(os.environ)),
                            machine_settings=_user_settings(coder.base_url))
        server.install_extension(extension_dir / "dist" / "cudalens.vsix")
        config = {"compiledTests": str(compiled_tests), "mode": "ask", "file": "transpose.cu",
                  "artifacts": str(tmp_path / "driver"), "expectCodes": ["CL10"], "quickFixLine": 8,
                  "quickFixColumn": 9, "quickFixTitle": "Ask Coder about this", "chromium": str(CHROMIUM),
                  "timeoutMs": 90_000}
        result, seen = _drive(installation, server, ws, config, tmp_path)
    artifacts = ARTIFACTS / "ask"
    ask = result["ask"]
    assert len(coder.requests) == 1 and "lines 4-10 of" in coder.requests[0].prompt, seen

    # The explanation, both sides of the code, in the notification with the three choices, and whole in the log.
    flat = " ".join(f"{EXPLANATION} {AFTERWORD}".split())
    assert "the Coder's suggestion for CL10" in ask["notification"] and flat in ask["notification"], ask
    assert ask["buttons"] == ["Apply", "Show diff", "Discard"], ask
    output = "\n".join(p.read_text() for p in (artifacts / "vscode-logs").rglob("*cudalens*.log"))
    assert f"{EXPLANATION}\n\n{AFTERWORD}" in output, output[-3000:]

    # "Show diff": VS Code's diff editor, the file against the proposal; no .diff file.
    assert ask["diffEditor"] and "transpose.cu ↔ the Coder's suggestion for CL10" in ask["diffTab"], ask
    assert ".diff" not in ask["diffTab"]
    assert NAIVE_STORE.strip() in ask["original"] and COALESCED_STORE.strip() in ask["modified"], ask
    assert (artifacts / "ask-diff.png").stat().st_size > 10_000

    # "Apply", then saved: the one line changed, the rest of the file byte for byte.
    assert ask["saved"], seen
    assert (ws / "transpose.cu").read_bytes() == original.replace(NAIVE_STORE, COALESCED_STORE).encode()


def test_without_a_server_the_error_says_how_and_opens_the_setting(
    installation, extension_dir: Path, compiled_tests: Path, tmp_path: Path
) -> None:
    """No `.venv`, nothing on PATH, nothing set: the error says where it looked and how to get cudalens (not
    `pip install cudalens`: it is on no index), and its "Open settings" lands on `cudalens.path`."""
    ws = tmp_path / "workspace"
    ws.mkdir()
    shutil.copy(FIXTURES / "transpose.cu", ws / "transpose.cu")
    env = _without_cudalens_on_path(dict(os.environ))
    server = CodeServer(installation, tmp_path / "code-server", env)
    server.install_extension(extension_dir / "dist" / "cudalens.vsix")
    config = {"compiledTests": str(compiled_tests), "mode": "notfound", "file": "transpose.cu",
              "artifacts": str(tmp_path / "driver"), "expectCodes": [], "chromium": str(CHROMIUM), "timeoutMs": 90_000}
    result, _ = _drive(installation, server, ws, config, tmp_path)
    message = next(n for n in result["notifications"] if "cudalens was not found" in n)
    assert f"no .venv/bin/cudalens in {ws}" in message and "make setup" in message and "Remote tab" in message, message
    assert "pip install cudalens" not in message
    assert result["settingsShown"] == ["Cudalens: Path"], result["settingsShown"]  # the Remote tab's, in code-server


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
            "showReport": True,
        }
        result, seen = _drive(installation, server, ws, config, tmp_path)
        artifacts = ARTIFACTS / "restricted"
        # "cudalens: Show report" runs nothing of the workspace: its page opens in a webview even here
        report = result["report"]
        assert report["headings"][:2] == ["Roofline", "Judge verdicts"], report
        assert any(row.startswith("transpose_naive") and "Predicted" in row for row in report["verdicts"]), report
        assert (artifacts / "report-webview.png").stat().st_size > 10_000
        assert any("CL10" in p for p in result["problems"]), seen
        assert any("not trusted" in n for n in result["notifications"]), seen
        assert result["servers"] and all(".tools" not in argv for argv in result["servers"]), result["servers"]
        assert not (ws / "MARKER").exists(), (ws / "MARKER").read_text()
        assert coder.requests == []
        output = "\n".join(p.read_text() for p in (artifacts / "vscode-logs").rglob("*cudalens*.log"))
        assert "Restricted Mode: static hints only" in output, output[-3000:]
        assert SECRET not in output


def test_everyday_a_clones_subfolder_trusted_lenses_and_a_lens_command(
    installation, extension_dir: Path, compiled_tests: Path, tmp_path: Path
) -> None:
    """Issue 38's first minutes: a subfolder of a clone opened untrusted (its .venv above is not run), then
    trusted: the server starts once, from the clone's .venv. A kernel's lenses say "no GPU" on a machine without
    one; the "Find hot ops" lens shows its progress in the status bar, its answer, and a line in the output."""
    from tests.model.ci_model import MODEL

    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / ".venv" / "bin").mkdir(parents=True)
    (clone / ".venv" / "bin" / "cudalens").symlink_to(Path(SERVER_PYTHON).parent / "cudalens")
    folder = clone / "kernels"
    folder.mkdir()
    shutil.copy(FIXTURES / "transpose.cu", folder / "transpose.cu")
    (folder / "block.py").write_text(MODEL)
    env = _without_cudalens_on_path(dict(os.environ))
    # The worker's interpreter has torch (a symlinked .venv/bin/python would not find its packages); a workspace
    # setting that counts only once trusted, so that trusting also changes the settings, as it does in a real
    # project: that change and the trust event each asked for a restart.
    (folder / ".vscode").mkdir()
    (folder / ".vscode" / "settings.json").write_text(json.dumps({"cudalens.worker.python": SERVER_PYTHON}))
    server = CodeServer(installation, tmp_path / "code-server", env, trust=True)
    server.install_extension(extension_dir / "dist" / "cudalens.vsix")
    config = {
        "compiledTests": str(compiled_tests), "mode": "everyday", "file": "transpose.cu", "modelFile": "block.py",
        "artifacts": str(tmp_path / "driver"), "expectCodes": [], "chromium": str(CHROMIUM), "timeoutMs": 120_000,
    }
    result, seen = _drive(installation, server, folder, config, tmp_path)
    everyday = result["everyday"]
    output = "\n".join(p.read_text() for p in (ARTIFACTS / "everyday" / "vscode-logs").rglob("*cudalens*.log"))

    venv = clone / ".venv" / "bin" / "cudalens"
    assert any(f"{venv} is in this workspace's repository, which is not trusted" in n
               for n in everyday["restrictedNotifications"]), everyday
    # trusted: one start (the trust event and the settings change it brings asked for one restart each before)
    assert output.count(f"starting {venv} serve (from .venv)") == 1, output[-3000:]
    assert len(everyday["serversStarted"]) == 1, everyday
    if not _has_gpu():
        assert any("Run tests · Profile: no GPU on this machine" in lens for lens in everyday["lenses"]), everyday
    assert any("Find hot ops · block.py" in item for item in everyday["progress"]), seen
    assert any("hot ops of block.py" in n for n in result["notifications"]), seen
    assert "cudalens: Find hot ops · block.py · model_and_inputs → hot ops of block.py" in output, output[-3000:]


def test_with_warm_start_the_next_window_is_forked(
    installation, extension_dir: Path, compiled_tests: Path, tmp_path: Path
) -> None:
    """Issue 38's new windows with `cudalens.warmStart` on: two windows of one editor session each draw their
    file's diagnostics; the first one's server started the session's warm server, and the second window's server
    is that warm server's fork, in the second window's folder. The warm server leaves with the editor's session."""
    from tests.server.procs import children, gone, wait_for, warm_server

    cache = Path(tempfile.mkdtemp(prefix="cl-e2e-"))  # short: a Unix socket's path is at most 107 bytes
    env = {**_without_cudalens_on_path(dict(os.environ)), "XDG_CACHE_HOME": str(cache)}
    server = CodeServer(installation, tmp_path / "code-server", env, user_settings={"cudalens.warmStart": True})
    server.install_extension(extension_dir / "dist" / "cudalens.vsix")
    folders = [_workspace(tmp_path / name) for name in ("one", "two")]
    try:
        for n, folder in enumerate(folders):
            config = {"file": "transpose.cu", "artifacts": str(tmp_path / f"driver-{n}"), "chromium": str(CHROMIUM),
                      "timeoutMs": 120_000, "mode": "first", "expectCodes": []}
            config["url"] = server.start(folder) if n == 0 else f"http://127.0.0.1:{server.port}/?folder={folder}"
            config["session"] = server.process.pid
            (tmp_path / f"driver-{n}.json").write_text(json.dumps(config))
            drive = subprocess.run([str(installation.node_bin / "node"), str(compiled_tests / "e2e" / "driver.js"),
                                    str(tmp_path / f"driver-{n}.json")], cwd=extension_dir, capture_output=True,
                                   text=True, timeout=600)
            result = json.loads((tmp_path / f"driver-{n}" / "result.json").read_text())
            assert drive.returncode == 0 and result.get("error") is None, (result.get("error"), drive.stderr[-3000:])
            assert result["first"]["diagnosticsMs"] > result["first"]["openedMs"]  # a squiggle was drawn
            if n == 0:
                wait_for(lambda: warm_server(cache) is not None, "the warm server the first window started")
        warm = warm_server(cache)
        assert warm is not None
        cwds = {os.readlink(f"/proc/{pid}/cwd") for pid in children(warm)}
        assert str(folders[1]) in cwds, cwds  # the second window's server: a fork, in its window's folder
    finally:
        server.stop()
        _keep_artifacts(tmp_path, server, ARTIFACTS / "warm")
        for n in range(len(folders)):  # each window's screenshot with its first squiggle, and its timings
            if (tmp_path / f"driver-{n}").is_dir():
                shutil.copytree(tmp_path / f"driver-{n}", ARTIFACTS / "warm" / f"window-{n + 1}")
    if warm is not None:
        wait_for(lambda: gone(warm), "the warm server to leave with the editor's session")
    shutil.rmtree(cache, ignore_errors=True)
