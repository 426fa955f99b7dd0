"""The language server measured from an outside client over stdio, as an editor sees it:

- didChange → publishDiagnostics on a ~3,000-line .cu file (one-line edits, like typing): median and p95
  (goal: median ≤ 30 ms on a 2-core machine; includes the server's debounce);
- a burst of N edits on that file (keystrokes `--burst-gap-ms` apart, default back to back; and 30 ms apart, as
  key repeat types), last keystroke → diagnostics of the last version, median of `--bursts` runs (goal: ≤ 100 ms
  on a 2-core machine);
- didOpen → first diagnostics for that file;
- resident memory of the server after opening N such files (default 50);
- CPU use of the server while idle for ~10 s with its watchdog observer running.

Run: python benchmarks/server_latency.py [--edits 40] [--bursts 5] [--burst-gap-ms 0] [--files 50] [--idle 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

sys.path.insert(0, str(Path(__file__).resolve().parent))

from big_cuda_file import big_cuda_source

EDIT_ANCHOR = "out[i] = in[i];"


class TimingProtocol(LanguageServerProtocol):
    """Notes when a publishDiagnostics message has been read, before the client turns its JSON into objects
    (for a few hundred diagnostics that takes the client longer than it takes the server to send them)."""

    def structure_message(self, data):
        if data.get("method") == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and "params" in data:
            params = data["params"]
            self._server.arrivals.setdefault((params.get("uri"), params.get("version")), time.perf_counter())
        return super().structure_message(data)


class Client(LanguageClient):
    def __init__(self) -> None:
        super().__init__("cudalens-benchmark", "1", protocol_cls=TimingProtocol)
        self.arrivals: dict[tuple[str, int | None], float] = {}
        self.events: dict[str, asyncio.Event] = {}

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.arrivals.setdefault((params.uri, params.version), time.perf_counter())
            self.events.setdefault(params.uri, asyncio.Event()).set()

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            pass

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            print(f"  (server says: {params.message})", flush=True)

        @self.feature("cudalens/status")
        def status(params: object) -> None:
            pass

        @self.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[None]:
            return [None for _ in params.items]

    async def wait_for(self, uri: str, version: int) -> float:
        while (uri, version) not in self.arrivals:
            event = self.events.setdefault(uri, asyncio.Event())
            event.clear()
            await asyncio.wait_for(event.wait(), 600)
        return self.arrivals[(uri, version)]


async def initialize(client: LanguageClient, root: Path) -> None:
    """The handshake of an editor that takes versioned diagnostics, with `root` as the workspace."""
    await client.initialize_async(types.InitializeParams(
        process_id=os.getpid(), root_uri=root.as_uri(),
        capabilities=types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True))),
    ))
    client.initialized(types.InitializedParams())


async def shut_down(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def edited_lines(text: str, line_no: int, edits: int) -> list[str]:
    original = text.splitlines()[line_no]
    return [original.replace(EDIT_ANCHOR, f"out[i] = in[i] + {k}.0f;") if k % 2 == 0 else original
            for k in range(edits)]


def replace_line(client: Client, uri: str, version: int, line_no: int, old: str, new: str) -> None:
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line_no, 0), types.Position(line_no, len(old))), text=new
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=version, uri=uri), [change])
    )


def analyzer_alone(text: str, line_no: int, edits: int, pause_s: float = 0.0) -> list[float]:
    """The same edits through a DocumentAnalyzer in this process: what the server cannot go below. With
    `pause_s` the process sleeps between edits as the keystrokes do; on this 2-core VM a CPU that was idle runs the
    same analysis ~1.5× slower (15–18 ms back to back, 25–29 ms after 50 ms asleep, 17 ms after 50 ms busy)."""
    from cudalens.analysis.api import DocumentAnalyzer

    doc = DocumentAnalyzer("/tmp/big0.cu")
    doc.update(text)
    lines = text.splitlines(keepends=True)
    times = []
    for new in edited_lines(text, line_no, edits):
        edited = "".join(lines[:line_no]) + new + "\n" + "".join(lines[line_no + 1:])
        time.sleep(pause_s)
        t0 = time.perf_counter()
        doc.update(edited)
        times.append(time.perf_counter() - t0)
    return times


async def run(edits: int, files: int, idle_s: float, bursts: int = 5, burst_gap_s: float = 0.0) -> None:
    text = big_cuda_source()
    root = Path(tempfile.mkdtemp(prefix="cudalens-bench-"))
    print(f"server log: {root / 'server.log'}")
    (root / "src").mkdir()
    client = Client()
    await client.start_io(sys.executable, "-m", "cudalens.server", "--log-file", str(root / "server.log"),
                            "--log-level", "debug")
    pid = client._server.pid
    await initialize(client, root)
    print(f"file: {text.count(chr(10)) + 1} lines, {text.count('__global__')} kernels; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (the figures are for an otherwise idle machine)",
          flush=True)

    # didOpen → first diagnostics
    path = root / "src" / "big0.cu"
    path.write_text(text)
    uri = path.as_uri()
    sent = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "cuda", 1, text)))
    opened = await client.wait_for(uri, 1) - sent
    print(f"didOpen -> first diagnostics: {opened * 1000:.0f} ms", flush=True)

    # didChange → publishDiagnostics, one-line edits inside one kernel
    lines = text.splitlines()
    line_no = next(i for i, line in enumerate(lines) if EDIT_ANCHOR in line)
    current = lines[line_no]
    latencies = []
    for k, new in enumerate(edited_lines(text, line_no, edits)):
        version = k + 2
        sent = time.perf_counter()
        replace_line(client, uri, version, line_no, current, new)
        latencies.append(await client.wait_for(uri, version) - sent)
        current = new
        await asyncio.sleep(0.05)  # a pause between keystrokes, so each edit is measured on its own
    print(
        f"didChange -> publishDiagnostics over {edits} edits: median {statistics.median(latencies) * 1000:.1f} ms, "
        f"p95 {percentile(latencies, 0.95) * 1000:.1f} ms (goal: median <= 30 ms)",
        flush=True,
    )
    # bursts: the keystrokes without waiting for diagnostics, then the time from the last one to its diagnostics
    version = edits + 1
    for gap_s in dict.fromkeys((burst_gap_s, 0.03)):  # the one asked for, and key repeat
        burst_latencies = []
        for _ in range(bursts):
            for new in edited_lines(text, line_no, edits):
                version += 1
                replace_line(client, uri, version, line_no, current, new)
                current = new
                sent = time.perf_counter()
                await asyncio.sleep(gap_s)
            burst_latencies.append(await client.wait_for(uri, version) - sent)
            await asyncio.sleep(0.5)  # quiet between bursts
        spacing = f"{gap_s * 1000:.0f} ms apart" if gap_s else "back to back"
        print(
            f"a burst of {edits} edits {spacing}, last keystroke -> its diagnostics: median "
            f"{statistics.median(burst_latencies) * 1000:.0f} ms over {bursts} bursts "
            f"({', '.join(f'{b * 1000:.0f}' for b in burst_latencies)}; goal: median <= 100 ms)",
            flush=True,
        )
    alone = analyzer_alone(text, line_no, edits)
    paused = analyzer_alone(text, line_no, edits, pause_s=0.05)
    print(
        f"  the analyzer alone on the same edits (in-process): median {statistics.median(alone) * 1000:.1f} ms back "
        f"to back, {statistics.median(paused) * 1000:.1f} ms with the keystrokes' 50 ms pauses; the server adds "
        f"~{(statistics.median(latencies) - statistics.median(paused)) * 1000:.1f} ms to the latter",
        flush=True,
    )

    # the same on a one-kernel file: the server's fixed cost per edit, without hundreds of findings to send
    small_text = (Path(__file__).resolve().parents[1] / "tests" / "server" / "kernels" / "strided.cu").read_text()
    small = root / "src" / "small.cu"
    small.write_text(small_text)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(small.as_uri(), "cuda", 1, small_text))
    )
    await client.wait_for(small.as_uri(), 1)
    small_latencies = []
    for k in range(edits):
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=k + 2, uri=small.as_uri()),
                [types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), types.Position(0, 0)), text=" " if k % 2 else "")],
            )
        )
        small_latencies.append(await client.wait_for(small.as_uri(), k + 2) - sent)
        await asyncio.sleep(0.05)
    print(f"  on a {small_text.count(chr(10))}-line file: median {statistics.median(small_latencies) * 1000:.1f} ms",
          flush=True)

    # memory after opening N files
    started = time.perf_counter()
    for n in range(1, files):
        other = root / "src" / f"big{n}.cu"
        other.write_text(text)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(other.as_uri(), "cuda", 1, text))
        )
    for n in range(1, files):
        await client.wait_for((root / "src" / f"big{n}.cu").as_uri(), 1)
    print(
        f"RSS after opening {files} such files: {rss_mib(pid):.0f} MiB "
        f"(all analysed in {time.perf_counter() - started:.0f} s)",
        flush=True,
    )

    # idle CPU with the watchdog observer running, in two windows: the first still holds the tail of the opens
    # (the files' watchdog events, the garbage of 50 analyses), the second is the server at rest
    for window in ("just after the opens", "then"):
        before, t0 = cpu_seconds(pid), time.perf_counter()
        await asyncio.sleep(idle_s)
        used, wall = cpu_seconds(pid) - before, time.perf_counter() - t0
        print(f"CPU while idle for {wall:.0f} s {window} (watchdog running): {100 * used / wall:.2f} %", flush=True)

    await shut_down(client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--bursts", type=int, default=5)
    parser.add_argument("--burst-gap-ms", type=float, default=0.0,
                        help="between the keystrokes of a burst (0: back to back, as a paste or a fast client sends "
                             "them); a burst 30 ms apart (key repeat) is measured too")
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--idle", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(run(args.edits, args.files, args.idle, args.bursts, args.burst_gap_ms / 1000))


if __name__ == "__main__":
    main()
