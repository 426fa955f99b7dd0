"""Bring public kernels into the accuracy corpus, reproducibly, without committing them.

Each entry below names a repository, a pinned commit and the files a kernel comes from. The script reads
those files (from a local mirror made by `git clone --mirror`, or from raw.githubusercontent.com), copies
out the kernels and the few definitions they need verbatim, and writes one standalone `.cu` per entry into
`benchmarks/accuracy/public/` (git-ignored) with a header that says where every piece came from and a
`main()` of ours that allocates random inputs and launches each kernel once. Nothing else is changed in
the copied code, so the line-level truth measured on it is truth about the original kernels.

    python benchmarks/accuracy/fetch_public.py [--mirror-root /work/.mirror] [--out DIR]

The GPU machine has no internet: run this where the mirrors or the network are, then carry
`benchmarks/accuracy/public` along (it is a few dozen KB of sources).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CUDA_SAMPLES = ("NVIDIA/cuda-samples", "c94ff366aed18c797b8a85dfaac7817b0228b420")
KERNELBENCH = ("ScalingIntelligence/KernelBench", "423217d9fda91e0c2d67e4a43bf62f96f6d104f1")
SAMPLES_DIR = "Samples/2_Concepts_and_Techniques"
KB_PROMPTS = "src/kernelbench/prompts"


@dataclass(frozen=True)
class Piece:
    """Something copied verbatim from one file: a `#define`/`typedef` line or a brace-balanced block."""

    path: str
    kind: str  # "line" (a line starting with `anchor`) or "block" (from the line matching `anchor` to its `}`)
    anchor: str  # a regular expression


@dataclass(frozen=True)
class PublicKernel:
    name: str  # output file stem
    repo: tuple[str, str]
    pieces: tuple[Piece, ...]
    main: str  # our launch code (the body of main)
    prelude: str = ""  # our includes that the copied code needs (the original includes pull in sample helpers)
    notes: tuple[str, ...] = field(default_factory=tuple)


def _line(path: str, anchor: str) -> Piece:
    return Piece(path, "line", anchor)


def _block(path: str, anchor: str) -> Piece:
    return Piece(path, "block", anchor)


TRANSPOSE = "Samples/6_Performance/transpose/transpose.cu"
REDUCTION = f"{SAMPLES_DIR}/reduction/reduction_kernel.cu"
HIST = f"{SAMPLES_DIR}/histogram/histogram256.cu"
HIST_H = f"{SAMPLES_DIR}/histogram/histogram_common.h"
SCAN = f"{SAMPLES_DIR}/shfl_scan/shfl_scan.cu"
MATMUL = "Samples/0_Introduction/matrixMul/matrixMul.cu"
CG = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"

PUBLIC: tuple[PublicKernel, ...] = (
    PublicKernel(
        "cuda_samples_transpose",
        CUDA_SAMPLES,
        (
            _line(TRANSPOSE, r"#define TILE_DIM\b"),
            _line(TRANSPOSE, r"#define BLOCK_ROWS\b"),
            _block(TRANSPOSE, r"__global__ void copy\("),
            _block(TRANSPOSE, r"__global__ void copySharedMem\("),
            _block(TRANSPOSE, r"__global__ void transposeNaive\("),
            _block(TRANSPOSE, r"__global__ void transposeCoalesced\("),
            _block(TRANSPOSE, r"__global__ void transposeNoBankConflicts\("),
            _block(TRANSPOSE, r"__global__ void transposeDiagonal\("),
        ),
        prelude=CG,
        main="""
    const int width = 1024, height = 1024;
    float* in = device_floats(size_t(width) * height);
    float* out = device_zeros<float>(size_t(width) * height);
    dim3 grid(width / TILE_DIM, height / TILE_DIM), block(TILE_DIM, BLOCK_ROWS);
    copy<<<grid, block>>>(out, in, width, height);
    finish("copy");
    copySharedMem<<<grid, block>>>(out, in, width, height);
    finish("copySharedMem");
    transposeNaive<<<grid, block>>>(out, in, width, height);
    finish("transposeNaive");
    transposeCoalesced<<<grid, block>>>(out, in, width, height);
    finish("transposeCoalesced");
    transposeNoBankConflicts<<<grid, block>>>(out, in, width, height);
    finish("transposeNoBankConflicts");
    transposeDiagonal<<<grid, block>>>(out, in, width, height);
    finish("transposeDiagonal");
""",
    ),
    PublicKernel(
        "cuda_samples_reduction",
        CUDA_SAMPLES,
        (
            _block(REDUCTION, r"template <class T> struct SharedMemory\b"),
            _block(REDUCTION, r"__global__ void reduce0\("),
            _block(REDUCTION, r"__global__ void reduce1\("),
            _block(REDUCTION, r"__global__ void reduce2\("),
            _block(REDUCTION, r"__global__ void reduce3\("),
        ),
        prelude=CG,
        main="""
    const unsigned n = 1 << 18;
    const int threads = 256;
    float* in = device_floats(n);
    float* out = device_zeros<float>(n / threads);
    reduce0<float><<<n / threads, threads, threads * sizeof(float)>>>(in, out, n);
    finish("reduce0");
    reduce1<float><<<n / threads, threads, threads * sizeof(float)>>>(in, out, n);
    finish("reduce1");
    reduce2<float><<<n / threads, threads, threads * sizeof(float)>>>(in, out, n);
    finish("reduce2");
    reduce3<float><<<n / (2 * threads), threads, threads * sizeof(float)>>>(in, out, n);
    finish("reduce3");
""",
    ),
    PublicKernel(
        "cuda_samples_histogram256",
        CUDA_SAMPLES,
        (
            _line(HIST_H, r"#define HISTOGRAM256_BIN_COUNT\b"),
            _line(HIST_H, r"#define UINT_BITS\b"),
            _line(HIST_H, r"typedef unsigned int\s+uint;"),
            _line(HIST_H, r"#define LOG2_WARP_SIZE\b"),
            _line(HIST_H, r"#define WARP_SIZE\b"),
            _line(HIST_H, r"#define WARP_COUNT\b"),
            _line(HIST_H, r"#define HISTOGRAM256_THREADBLOCK_SIZE\b"),
            _line(HIST_H, r"#define HISTOGRAM256_THREADBLOCK_MEMORY\b"),
            _line(HIST_H, r"#define UMUL\("),
            _line(HIST_H, r"#define UMAD\("),
            _line(HIST, r"#define TAG_MASK\b"),
            _line(HIST, r"inline __device__ void addByte\("),
            _block(HIST, r"inline __device__ void addWord\("),
            _block(HIST, r"__global__ void histogram256Kernel\("),
            _line(HIST, r"#define MERGE_THREADBLOCK_SIZE\b"),
            _block(HIST, r"__global__ void mergeHistogram256Kernel\("),
        ),
        prelude=CG,
        main="""
    const unsigned words = 1 << 20, partials = 240;
    uint* data = reinterpret_cast<uint*>(device_floats(words));
    uint* partial = device_zeros<uint>(partials * HISTOGRAM256_BIN_COUNT);
    uint* hist = device_zeros<uint>(HISTOGRAM256_BIN_COUNT);
    histogram256Kernel<<<partials, HISTOGRAM256_THREADBLOCK_SIZE>>>(partial, data, words);
    finish("histogram256Kernel");
    mergeHistogram256Kernel<<<HISTOGRAM256_BIN_COUNT, MERGE_THREADBLOCK_SIZE>>>(hist, partial, partials);
    finish("mergeHistogram256Kernel");
""",
    ),
    PublicKernel(
        "cuda_samples_shfl_scan",
        CUDA_SAMPLES,
        (
            _block(SCAN, r"__global__ void shfl_scan_test\("),
            _block(SCAN, r"__global__ void uniform_add\("),
        ),
        main="""
    const int n = 1 << 18, threads = 256, blocks = n / threads;
    int* data = device_indices(n, 16);
    int* partial = device_zeros<int>(blocks);
    shfl_scan_test<<<blocks, threads, (threads / 32) * sizeof(int)>>>(data, 32, partial);
    finish("shfl_scan_test");
    uniform_add<<<blocks, threads>>>(data, partial, n);
    finish("uniform_add");
""",
    ),
    PublicKernel(
        "cuda_samples_matrixmul",
        CUDA_SAMPLES,
        (_block(MATMUL, r"template <int BLOCK_SIZE> __global__ void MatrixMulCUDA\("),),
        main="""
    const int n = 512, block = 32;
    float* A = device_floats(size_t(n) * n, 21);
    float* B = device_floats(size_t(n) * n, 22);
    float* C = device_zeros<float>(size_t(n) * n);
    MatrixMulCUDA<block><<<dim3(n / block, n / block), dim3(block, block)>>>(C, A, B, n, n);
    finish("MatrixMulCUDA");
""",
    ),
    PublicKernel(
        "kernelbench_tiled_matmul",
        KERNELBENCH,
        (
            _line(f"{KB_PROMPTS}/few_shot/model_new_ex_tiled_matmul.py", r"constexpr int TILE_SIZE"),
            _block(f"{KB_PROMPTS}/few_shot/model_new_ex_tiled_matmul.py", r"__global__ void tiled_matmul_kernel\("),
        ),
        main="""
    const int n = 512;
    float* M = device_floats(size_t(n) * n, 31);
    float* N = device_floats(size_t(n) * n, 32);
    float* out = device_zeros<float>(size_t(n) * n);
    tiled_matmul_kernel<<<dim3(n / TILE_SIZE, n / TILE_SIZE), dim3(TILE_SIZE, TILE_SIZE)>>>(out, M, N, n, n, n);
    finish("tiled_matmul_kernel");
""",
    ),
    PublicKernel(
        "kernelbench_gelu_add",
        KERNELBENCH,
        (
            _block(f"{KB_PROMPTS}/few_shot/model_new_ex_fuse_gelu.py", r"__global__ void my_gelu_kernel\("),
            _block(f"{KB_PROMPTS}/model_new_ex_add.py", r"__global__ void elementwise_add_kernel\("),
        ),
        main="""
    const int n = 1 << 20;
    float* a = device_floats(n, 41);
    float* b = device_floats(n, 42);
    float* out = device_zeros<float>(n);
    my_gelu_kernel<<<(n + 255) / 256, 256>>>(out, a, n);
    finish("my_gelu_kernel");
    elementwise_add_kernel<<<(n + 255) / 256, 256>>>(a, b, out, n);
    finish("elementwise_add_kernel");
""",
    ),
    PublicKernel(
        "kernelbench_flash_attn",
        KERNELBENCH,
        (_block(f"{KB_PROMPTS}/few_shot/model_new_ex_flash_attn.py", r"^void attention_kernel\("),),
        main="""
    // The launch of the example's wrapper: B=4, nh=4, N=128, d=64, Bc=Br=32 threads per block.
    const int B = 4, nh = 4, N = 128, d = 64, Bc = 32, Br = 32;
    const int Tc = (N + Bc - 1) / Bc, Tr = (N + Br - 1) / Br;
    const size_t elems = size_t(B) * nh * N * d;
    float* Q = device_floats(elems, 51);
    float* K = device_floats(elems, 52);
    float* V = device_floats(elems, 53);
    float* O = device_zeros<float>(elems);
    float* l = device_zeros<float>(size_t(B) * nh * N);
    float* m = device_floats(size_t(B) * nh * N, 54);
    const int sram = (3 * Bc * d + Bc * Br) * sizeof(float);
    attention_kernel<<<dim3(B, nh), Bc, sram>>>(Q, K, V, N, d, Tc, Tr, Bc, Br, 0.125f, l, m, O);
    finish("attention_kernel");
""",
    ),
)


def read_source(repo: str, commit: str, path: str, mirror_root: Path | None) -> str:
    """The file at the pinned commit: from a local mirror (`owner+name/repo`) when present, else GitHub."""
    if mirror_root is not None:
        git_dir = mirror_root / repo.replace("/", "+") / "repo"
        if git_dir.exists():
            done = subprocess.run(
                ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode == 0:
                return done.stdout
    url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read().decode("utf-8")


def extract(text: str, piece: Piece) -> str:
    """The verbatim text of one piece; a clear error when the pinned file no longer has it."""
    lines = text.splitlines()
    pattern = re.compile(piece.anchor)
    for index, line in enumerate(lines):
        if not pattern.search(line):
            continue
        if piece.kind == "line":
            return line.strip()
        # A declaration split as `__global__` / `void name(...)` starts on the line above.
        first = index - 1 if index > 0 and lines[index - 1].strip() == "__global__" else index
        return _balanced_block(lines, first)
    raise SystemExit(f"fetch_public: {piece.path}: nothing matches {piece.anchor!r}")


def _balanced_block(lines: list[str], start: int) -> str:
    depth = 0
    opened = False
    for end in range(start, len(lines)):
        code = re.sub(r"//.*", "", lines[end])
        depth += code.count("{") - code.count("}")
        opened = opened or "{" in code
        if opened and depth <= 0:
            return "\n".join(lines[start : end + 1])
    raise SystemExit(f"fetch_public: unbalanced braces after line {start + 1}")


def render(kernel: PublicKernel, mirror_root: Path | None) -> str:
    repo, commit = kernel.repo
    cache: dict[str, str] = {}
    parts = []
    origins = []
    for piece in kernel.pieces:
        if piece.path not in cache:
            cache[piece.path] = read_source(repo, commit, piece.path, mirror_root)
        parts.append(extract(cache[piece.path], piece))
        if piece.path not in origins:
            origins.append(piece.path)
    header = [
        f"// Copied verbatim from https://github.com/{repo} at commit {commit}:",
        *(f"//   {path}" for path in origins),
        "// (see that repository's license). Generated by benchmarks/accuracy/fetch_public.py, which adds only",
        "// the includes below and main(); do not edit, do not commit.",
        '#include "harness.cuh"',
    ]
    body = "\n\n".join(parts)
    return "\n".join(header) + "\n" + kernel.prelude + "\n" + body + "\n\nint main() {" + kernel.main + "    return 0;\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=HERE / "public")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "harness.cuh").write_text((HERE / "kernels" / "harness.cuh").read_text())
    for kernel in PUBLIC:
        target = args.out / f"{kernel.name}.cu"
        target.write_text(render(kernel, args.mirror_root))
        print(f"wrote {target.relative_to(HERE)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
