"""Open → first diagnostics in a new window, as the editor sees the server: a fresh `cudalens serve` process per
run, spoken to over stdio with the messages VS Code sends (initialize with its capabilities, initialized,
didOpen of a .cu file), timed from the spawn:

- `initialize` answered (the server's imports and set-up: what a new window waits for first);
- the first publishDiagnostics of the opened file (goal ≤ 1.5 s: issue 38);
- and, for where the time goes, the server's own import of `cudalens.server.app` in a fresh interpreter
  (`python -X importtime`, the ten slowest packages).

The editor's own part (activating the extension, finding the server) comes on top and is not measured here. Run: python benchmarks/first_diagnostics.py [--runs 5] [--file examples/matmul_naive.cu]
[--server "python -m cudalens serve"]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--file", default=str(ROOT / "examples" / "matmul_naive.cu"))
    parser.add_argument("--server", default=f"{shlex.quote(sys.executable)} -m cudalens serve")
    args = parser.parse_args()
    server = shlex.split(args.server)
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
