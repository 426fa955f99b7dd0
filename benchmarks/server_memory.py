"""The language server's resident memory over a long session, measured from an outside client over stdio:

- RSS after every eighth of N analysed edits of one small .cu file (each edit waits for its diagnostics), so a
  growth per edit shows as a slope (it was ~1.8 KB per edit with no plateau: pygls kept every notification's
  handler future, see server/protocol.py);
- RSS after every quarter of M files opened, analysed and closed (a closed file must leave nothing behind).

Run: python benchmarks/server_memory.py [--edits 8000] [--files 300]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_latency import Client, initialize, rss_mib, shut_down

KERNEL = (Path(__file__).resolve().parents[1] / "tests" / "server" / "kernels" / "strided.cu").read_text()


def change(uri: str, version: int, text: str) -> types.DidChangeTextDocumentParams:
    edit = types.TextDocumentContentChangePartial(range=types.Range(types.Position(0, 3), types.Position(0, 4)),
                                                  text=text)
    return types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=version, uri=uri), [edit])


async def run(edits: int, files: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="cudalens-memory-"))
    client = Client()
    await client.start_io(sys.executable, "-m", "cudalens.server", "--log-file", str(root / "server.log"))
    pid = client._server.pid
    await initialize(client, root)

    path = root / "edited.cu"
    path.write_text(KERNEL)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "cuda", 1, KERNEL)))
    await client.wait_for(uri, 1)
    start, t0 = rss_mib(pid), time.perf_counter()
    print(f"RSS after opening one {KERNEL.count(chr(10))}-line file: {start:.1f} MiB", flush=True)
    step = max(edits // 8, 1)
    for k in range(1, edits + 1):
        client.text_document_did_change(change(uri, k + 1, "e" if k % 2 else "E"))  # in the first comment
        await client.wait_for(uri, k + 1)
        if k % step == 0:
            now = rss_mib(pid)
            print(f"  after {k:6d} edits: {now:6.1f} MiB ({(now - start) * 1024 * 1024 / k:+.0f} B per edit)",
                  flush=True)
    print(f"  ({edits} edits in {time.perf_counter() - t0:.0f} s)", flush=True)

    before = rss_mib(pid)
    step = max(files // 4, 1)
    for n in range(1, files + 1):
        other = root / f"closed{n}.cu"
        other.write_text(KERNEL)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(other.as_uri(), "cuda", 1, KERNEL)))
        await client.wait_for(other.as_uri(), 1)
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(other.as_uri())))
        if n % step == 0:
            now = rss_mib(pid)
            print(f"  after {n:4d} files opened and closed: {now:6.1f} MiB "
                  f"({(now - before) * 1024 / n:+.1f} KB per file)", flush=True)

    await shut_down(client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=8000)
    parser.add_argument("--files", type=int, default=300)
    args = parser.parse_args()
    asyncio.run(run(args.edits, args.files))


if __name__ == "__main__":
    main()
