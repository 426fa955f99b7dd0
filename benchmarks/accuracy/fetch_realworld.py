"""Bring the real-world accuracy suite in: whole programs of public projects, verbatim, at pinned commits.

The suite is karpathy/llm.c's `dev/cuda/*.cu` (each a standalone program whose `main()` checks and times one
of several kernel versions, chosen by `argv[1]`) and a set of NVIDIA/cuda-samples programs (with the
samples' `Common/` helper headers). Files are copied byte for byte into `benchmarks/accuracy/realworld/`
(git-ignored, never committed), under their repository paths, so every line number is the upstream one.
The only edits are the main()-side constants listed in PATCHES (a benchmark repeat count cut to 1), each
replacing text inside one line so that no line moves; kernels and their helpers are never touched.

It also writes `realworld/manifest.json`: per program its sources, build flags, and the runs
`measure_realworld.py` makes on the GPU -- which command line, which kernels that command launches, and how
many of a kernel's launches to skip so that ncu and compute-sanitizer see the launch at a 256-thread block
(llm.c's programs launch every version at block sizes 32 ... 1024; the first launch would be one warp).
For llm.c the runs are derived from each program's `switch (kernel_num)` dispatch and the launches its
wrapper functions make; for the samples they are listed below.

    python benchmarks/accuracy/fetch_realworld.py [--mirror-root /work/.mirror] [--out DIR]

The GPU machine has no internet: run this here and carry `benchmarks/accuracy/realworld` (about 2 MB).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # a sibling module: kernel spans by brace matching
from fetch_public import _balanced_block, read_source

HERE = Path(__file__).resolve().parent
LLMC = ("karpathy/llm.c", "f1e2ace651495b74ae22d45d1723443fd00ecd3a")
SAMPLES = ("NVIDIA/cuda-samples", "c94ff366aed18c797b8a85dfaac7817b0228b420")
TARGET_THREADS = 256
LLMC_FLAGS = ("-O3", "--use_fast_math", "-std=c++17")  # dev/cuda/Makefile's CFLAGS and NVCCFLAGS
CUBLAS = ("-lcublas", "-lcublasLt")
SAMPLE_HEADERS = (
    "Common/helper_cuda.h",
    "Common/helper_functions.h",
    "Common/helper_string.h",
    "Common/helper_timer.h",
    "Common/helper_image.h",
    "Common/helper_math.h",
    "Common/exception.h",
)


@dataclass(frozen=True)
class Patch:
    """A main()-side edit inside one line: `pattern` (a regex) becomes `replacement` on every line it matches."""

    pattern: str
    replacement: str
    reason: str


@dataclass(frozen=True)
class Run:
    argv: tuple[str, ...]
    kernels: tuple[str, ...]  # the kernels this command line launches (names as written)


@dataclass(frozen=True)
class Program:
    name: str
    repo: tuple[str, str]
    folder: str  # the program's folder in the repository
    sources: tuple[str, ...]  # compiled, relative to `folder`
    headers: tuple[str, ...] = ()  # copied too, relative to the repository root
    flags: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()  # include folders, relative to the repository root
    runs: tuple[Run, ...] | None = None  # None: derived from the kernel_num dispatch (llm.c)
    patches: tuple[Patch, ...] = ()
    skip_reason: str = ""  # set: not built or run (says why)
    notes: tuple[str, ...] = field(default_factory=tuple)


REPEAT_ONE = Patch(
    r"\bint repeat_times = \d+;",
    "int repeat_times = 1;",
    "the benchmark loop's repeat count (a main() constant) cut to 1: the timings are not used, and every "
    "repeat is a launch ncu and the sanitizers would wait for",
)

LLMC_NOTES = {
    "attention_forward": ("kernel_num 10 (cuDNN flash attention) exists only with -DENABLE_CUDNN and the cudnn-frontend "
                          "headers, which the H200 machine lacks: built without it, so that version is not run",),
}
# llm.c dev/cuda programs: every one includes common.h (cuBLAS/cuBLASLt handles are made in setup code).
LLMC_PROGRAMS: tuple[Program, ...] = tuple(
    Program(
        f"llm.c/{stem}",
        LLMC,
        "dev/cuda",
        (f"{stem}.cu",),
        headers=("dev/cuda/common.h",),
        flags=LLMC_FLAGS + CUBLAS + (("-Xcompiler", "-fopenmp") if stem.startswith("matmul_backward") or stem == "matmul_forward" else ()),
        patches=(REPEAT_ONE,),
        skip_reason=reason,
        notes=LLMC_NOTES.get(stem, ()),
    )
    for stem, reason in (
        ("adamw", ""),
        ("attention_backward", ""),
        ("attention_forward", ""),
        ("classifier_fused", ""),
        ("crossentropy_forward", ""),
        ("crossentropy_softmax_backward", ""),
        ("encoder_backward", ""),
        ("encoder_forward", ""),
        ("fused_residual_forward", ""),
        ("gelu_backward", ""),
        ("gelu_forward", ""),
        ("global_norm", ""),
        ("layernorm_backward", ""),
        ("layernorm_forward", ""),
        ("matmul_backward", ""),
        ("matmul_backward_bias", ""),
        ("matmul_forward", ""),
        ("nccl_all_reduce", "needs MPI and NCCL and two processes (mpirun -np 2); the H200 machine has one GPU"),
        ("permute", ""),
        ("residual_forward", ""),
        ("softmax_forward", ""),
        ("trimat_forward", ""),
    )
)


def _sample(name: str, folder: str, sources: tuple[str, ...], runs: tuple[Run, ...] | None = None,
            headers: tuple[str, ...] = (), flags: tuple[str, ...] = (), notes: tuple[str, ...] = (),
            includes: tuple[str, ...] = ()) -> Program:
    return Program(
        f"cuda-samples/{name}",
        SAMPLES,
        f"Samples/{folder}",
        sources,
        headers=SAMPLE_HEADERS + tuple(f"Samples/{folder}/{h}" for h in headers),
        flags=("-O3", "-std=c++17", *flags),
        includes=("Common", *(f"Samples/{folder}/{i}" for i in includes)),
        runs=runs,
        notes=notes,
    )


def _each(flag: str, kernels: dict[int, str]) -> tuple[Run, ...]:
    return tuple(Run((f"{flag}={number}",), (kernel,)) for number, kernel in kernels.items())


SAMPLE_PROGRAMS: tuple[Program, ...] = (
    _sample("matrixMul", "0_Introduction/matrixMul", ("matrixMul.cu",)),
    _sample("vectorAdd", "0_Introduction/vectorAdd", ("vectorAdd.cu",)),
    _sample("simpleAtomicIntrinsics", "0_Introduction/simpleAtomicIntrinsics",
            ("simpleAtomicIntrinsics.cu", "simpleAtomicIntrinsics_cpu.cpp"),
            headers=("simpleAtomicIntrinsics_kernel.cuh",)),
    _sample("simpleVoteIntrinsics", "0_Introduction/simpleVoteIntrinsics", ("simpleVoteIntrinsics.cu",),
            headers=("simpleVote_kernel.cuh",)),
    _sample("simpleTemplates", "0_Introduction/simpleTemplates", ("simpleTemplates.cu",), headers=("sharedmem.cuh",)),
    _sample("mergeSort", "0_Introduction/mergeSort",
            ("main.cpp", "bitonic.cu", "mergeSort.cu", "mergeSort_host.cpp", "mergeSort_validate.cpp"),
            headers=("mergeSort_common.h",)),
    _sample("reduction", "2_Concepts_and_Techniques/reduction", ("reduction.cpp", "reduction_kernel.cu"),
            headers=("reduction.h",),
            runs=_each("--kernel", {0: "reduce0", 1: "reduce1", 2: "reduce2", 3: "reduce3", 4: "reduce4",
                                    5: "reduce5", 6: "reduce6", 7: "reduce7", 8: "cg_reduce",
                                    9: "multi_warp_cg_reduce"})),
    _sample("histogram", "2_Concepts_and_Techniques/histogram",
            ("main.cpp", "histogram64.cu", "histogram256.cu", "histogram_gold.cpp"), headers=("histogram_common.h",)),
    _sample("scan", "2_Concepts_and_Techniques/scan", ("main.cpp", "scan.cu", "scan_gold.cpp"),
            headers=("scan_common.h",)),
    _sample("shfl_scan", "2_Concepts_and_Techniques/shfl_scan", ("shfl_scan.cu",),
            headers=("shfl_integral_image.cuh", "util.h")),
    _sample("sortingNetworks", "2_Concepts_and_Techniques/sortingNetworks",
            ("main.cpp", "bitonicSort.cu", "oddEvenMergeSort.cu", "sortingNetworks_validate.cpp"),
            headers=("sortingNetworks_common.cuh", "sortingNetworks_common.h")),
    _sample("scalarProd", "2_Concepts_and_Techniques/scalarProd", ("scalarProd.cu", "scalarProd_cpu.cpp"),
            headers=("scalarProd_kernel.cuh",)),
    _sample("convolutionSeparable", "2_Concepts_and_Techniques/convolutionSeparable",
            ("main.cpp", "convolutionSeparable.cu", "convolutionSeparable_gold.cpp"),
            headers=("convolutionSeparable_common.h",)),
    _sample("threadFenceReduction", "2_Concepts_and_Techniques/threadFenceReduction", ("threadFenceReduction.cu",),
            headers=("threadFenceReduction.h", "threadFenceReduction_kernel.cuh")),
    _sample("warpAggregatedAtomicsCG", "3_CUDA_Features/warpAggregatedAtomicsCG", ("warpAggregatedAtomicsCG.cu",)),
    _sample("binaryPartitionCG", "3_CUDA_Features/binaryPartitionCG", ("binaryPartitionCG.cu",)),
    _sample("simpleCooperativeGroups", "0_Introduction/simpleCooperativeGroups", ("simpleCooperativeGroups.cu",)),
    _sample("globalToShmemAsyncCopy", "3_CUDA_Features/globalToShmemAsyncCopy", ("globalToShmemAsyncCopy.cu",),
            runs=_each("-kernel", {0: "MatrixMulAsyncCopyMultiStageLargeChunk", 1: "MatrixMulAsyncCopyLargeChunk",
                                   2: "MatrixMulAsyncCopyLargeChunkAWBarrier",
                                   3: "MatrixMulAsyncCopyMultiStageSharedState", 4: "MatrixMulAsyncCopyMultiStage",
                                   5: "MatrixMulAsyncCopySingleStage", 6: "MatrixMulNaive",
                                   7: "MatrixMulNaiveLargeChunk"})),
    _sample("cudaTensorCoreGemm", "3_CUDA_Features/cudaTensorCoreGemm", ("cudaTensorCoreGemm.cu",)),
    _sample("BlackScholes", "5_Domain_Specific/BlackScholes", ("BlackScholes.cu", "BlackScholes_gold.cpp"),
            headers=("BlackScholes_kernel.cuh",)),
    _sample("binomialOptions", "5_Domain_Specific/binomialOptions",
            ("binomialOptions.cpp", "binomialOptions_kernel.cu", "binomialOptions_gold.cpp"),
            headers=("binomialOptions_common.h", "realtype.h")),
    _sample("fastWalshTransform", "5_Domain_Specific/fastWalshTransform",
            ("fastWalshTransform.cu", "fastWalshTransform_gold.cpp"), headers=("fastWalshTransform_kernel.cuh",)),
    _sample("quasirandomGenerator", "5_Domain_Specific/quasirandomGenerator",
            ("quasirandomGenerator.cpp", "quasirandomGenerator_kernel.cu", "quasirandomGenerator_gold.cpp"),
            headers=("quasirandomGenerator_common.h",)),
    _sample("SobolQRNG", "5_Domain_Specific/SobolQRNG",
            ("sobol.cpp", "sobol_gold.cpp", "sobol_gpu.cu", "sobol_primitives.cpp"),
            headers=("sobol.h", "sobol_gold.h", "sobol_gpu.h", "sobol_primitives.h")),
    _sample("FDTD3d", "5_Domain_Specific/FDTD3d", ("src/FDTD3d.cpp", "src/FDTD3dGPU.cu", "src/FDTD3dReference.cpp"),
            headers=("inc/FDTD3d.h", "inc/FDTD3dGPU.h", "inc/FDTD3dGPUKernel.cuh", "inc/FDTD3dReference.h"),
            includes=("inc",)),
    _sample("transpose", "6_Performance/transpose", ("transpose.cu",)),
    _sample("alignedTypes", "6_Performance/alignedTypes", ("alignedTypes.cu",)),
)

PROGRAMS = LLMC_PROGRAMS + SAMPLE_PROGRAMS
_LAUNCH = re.compile(r"\b(\w+)\s*(?:<[^;{}]*?>)?\s*<<<")


# ---------------------------------------------------------------- preprocessor conditionals


def active_text(text: str, defines: set[str]) -> str:
    """The text with lines in inactive `#if` branches blanked (lines keep their numbers).

    Enough for the conditionals of these programs: `#ifdef`, `#ifndef`, `#if` / `#elif` over `defined(X)`,
    `!`, `&&`, `||`, integers and `==`/`>=` comparisons of known macros (unknown names count as 0, as in
    the C preprocessor). Macros `#define`d by the active text on the way down are known from there on.
    """
    known = set(defines)
    out = []
    stack: list[tuple[bool, bool]] = []  # (this branch active, some branch of this #if taken)
    for line in text.splitlines():
        stripped = line.strip()
        directive = re.match(r"#\s*(ifdef|ifndef|if|elif|else|endif|define)\b\s*(.*)", stripped)
        outer = all(active for active, _ in stack)
        if directive:
            kind, rest = directive.groups()
            rest = re.sub(r"//.*|/\*.*?\*/", "", rest).strip()
            if kind in ("ifdef", "ifndef", "if"):
                value = (rest.split()[0] in known) if kind == "ifdef" else (
                    rest.split()[0] not in known if kind == "ifndef" else _evaluate(rest, known))
                stack.append((value, value))
            elif kind == "elif" and stack:
                taken = stack[-1][1]
                value = not taken and _evaluate(rest, known)
                stack[-1] = (value, taken or value)
            elif kind == "else" and stack:
                stack[-1] = (not stack[-1][1], True)
            elif kind == "endif" and stack:
                stack.pop()
            elif kind == "define" and outer and rest:
                known.add(rest.split()[0].split("(")[0])
            out.append("")
            continue
        out.append(line if outer else "")
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _evaluate(condition: str, known: set[str]) -> bool:
    expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)", lambda m: "1" if (m.group(1) or m.group(2)) in known else "0", condition)
    expr = re.sub(r"\b[A-Za-z_]\w*\b", "0", expr)
    expr = expr.replace("&&", " and ").replace("||", " or ").replace("!", " not ").replace(" not =", "!=")
    try:
        return bool(eval(expr, {"__builtins__": {}}, {}))  # digits, operators and and/or/not only
    except (SyntaxError, NameError, TypeError):
        return False


# ---------------------------------------------------------------- llm.c run plans


def functions(text: str, host_only: bool = True) -> dict[str, str]:
    """Top-level function name → its body, for every `name(...) {` at the start of a line's declaration
    (host functions only, or device ones too)."""
    lines = text.splitlines()
    found: dict[str, str] = {}
    for match in re.finditer(r"^[A-Za-z_][\w:<>,\t \*&]*(?:\n[\w:<>,\t \*&]+)?\b(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{", text, re.M):
        name = match.group(1)
        declaration = text[match.start() : match.start(1)]
        device = ("__global__" in declaration or "__device__" in declaration) and "__host__" not in declaration
        if name in ("if", "for", "while", "switch", "return") or name in found or (device and host_only):
            continue
        start = text.count("\n", 0, match.start())
        found[name] = _balanced_block(lines, start)
    return found


def launches_of(name: str, bodies: dict[str, str], depth: int = 0) -> list[str]:
    """The kernel launches one call of host function `name` makes, in order (launch sites, not loop counts)."""
    body = bodies.get(name, "")
    if depth > 8 or not body:
        return []
    body = re.sub(r"//.*", "", body)
    # One launch per kernel and function: sites of one kernel in one function are alternatives (if/else on a
    # flag, a switch over template arguments), not a sequence.
    first: dict[str, int] = {}
    for m in _LAUNCH.finditer(body):
        first.setdefault(m.group(1), m.start())
    events: list[tuple[int, list[str]]] = [(start, [kernel]) for kernel, start in first.items()]
    events += [(start, launches_of(callee, bodies, depth + 1)) for start, callee in _references(body, bodies, name)]
    return [kernel for _, kernels in sorted(events) for kernel in kernels]


def _references(code: str, bodies: dict[str, str], own: str = "") -> list[tuple[int, str]]:
    """The host functions `code` calls or hands on (a launcher passed as an argument runs too), by position."""
    start = code.find("{") if own else 0
    return [
        (start + m.start(), m.group(1))
        for m in re.finditer(r"\b(\w+)\b(?!\s*(?:<[^;{}]*?>)?\s*<<<)", code[start:])
        if m.group(1) != own and m.group(1) in bodies
    ]


def dispatch_cases(text: str, bodies: dict[str, str]) -> dict[int, list[str]]:
    """`switch (kernel_num) { case N: f(...); ... }` → N → the functions that case calls."""
    match = re.search(r"switch\s*\(\s*kernel_num\s*\)\s*\{", text)
    if match is None:
        return {}
    lines = text.splitlines()
    block = _balanced_block(lines, text.count("\n", 0, match.start()))
    cases: dict[int, list[str]] = {}
    for case in re.finditer(r"case\s+(\d+)\s*:(.*?)(?=case\s+\d+\s*:|default\s*:|\Z)", block, re.S):
        cases[int(case.group(1))] = [name for _, name in _references(re.sub(r"//.*", "", case.group(2)), bodies)]
    return cases


def target_position(main_body: str) -> int:
    """Which launch of a version's validation loop runs at a 256-thread block: the position of 256 in main's
    `block_sizes[]` (or of 16 in `sqrt_block_sizes[]`), else of the size nearest to it; 0 without a list."""
    match = re.search(r"\b(sqrt_)?block_sizes\[\]\s*=\s*\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", main_body))
    if match is None:
        return 0
    sizes = [int(v) for v in re.findall(r"\d+", match.group(2))]
    threads = [s * s if match.group(1) else s for s in sizes]
    return min(range(len(threads)), key=lambda i: abs(threads[i] - TARGET_THREADS))


def llmc_runs(text: str, defines: set[str]) -> tuple[list[dict], list[str]]:
    """The runs of one llm.c program: one per compiled `kernel_num` case, each naming the kernels it launches
    and how many launches of each to skip to reach the 256-thread one. Also returns notes."""
    active = active_text(text, defines)
    bodies = functions(active)
    position = target_position(bodies.get("main", ""))
    runs, notes = [], []
    cases = dispatch_cases(active, bodies)
    if not cases:  # a program of one kernel: main launches it
        kernels = list(dict.fromkeys(launches_of("main", bodies)))
        return [{"argv": [], "kernels": [{"name": k, "skip": 0} for k in kernels]}], notes
    for number, calls in sorted(cases.items()):
        sequence = [k for call in calls for k in launches_of(call, bodies)]
        if not sequence:
            notes.append(f"kernel_num {number} launches no kernel of this file (a library call): not run")
            continue
        kernels = list(dict.fromkeys(sequence))
        runs.append(
            {
                "argv": [str(number)],
                "kernels": [{"name": k, "skip": position * sequence.count(k)} for k in kernels],
            }
        )
    return runs, notes


# ---------------------------------------------------------------- writing


def patched(text: str, patches: tuple[Patch, ...]) -> tuple[str, list[dict]]:
    """The text with each patch applied inside main() only, and a record per changed line."""
    lines = text.split("\n")
    spans = [(m.start(), m) for m in re.finditer(r"^int\s+main\s*\(", text, re.M)]
    if not spans or not patches:
        return text, []
    first = text.count("\n", 0, spans[0][0])
    last = first + _balanced_block(lines, first).count("\n")
    applied = []
    for index in range(first, last + 1):
        for patch in patches:
            new = re.sub(patch.pattern, patch.replacement, lines[index])
            if new != lines[index]:
                applied.append({"line": index + 1, "was": lines[index].strip(), "now": new.strip(), "reason": patch.reason})
                lines[index] = new
    return "\n".join(lines), applied


SHARED = re.compile(r"shared", re.I)  # `__shared__`, `extern __shared__`, the samples' SharedMemory<T>
SYNC = re.compile(r"sync|barrier|arrive|\.wait\b|__shfl|__ballot|__any|__all|__activemask|\breduce\b")


def kernel_facts(texts: dict[str, str]) -> dict[str, dict]:
    """Per kernel of a program: where it is, whether it is a template (then each run's instantiation is
    measured apart), and whether it or a function it calls touches shared memory (racecheck can report
    something) or synchronises (synccheck can)."""
    every = {}
    for text in texts.values():
        every.update(functions(text, host_only=False))
    facts: dict[str, dict] = {}
    for path, text in texts.items():
        lines = text.splitlines()
        for span in corpus.kernel_spans(text):
            body = "\n".join(lines[span.first_line - 1 : span.last_line])
            reached, todo = {span.name}, [body]
            while todo:
                code = todo.pop()
                for name in set(re.findall(r"\b(\w+)\s*(?:<[^;{}]*?>)?\s*\(", code)) - reached:
                    if name in every:
                        reached.add(name)
                        todo.append(every[name])
            code = body + "\n".join(every[n] for n in reached if n in every and n != span.name)
            above = lines[span.first_line - 2] if span.first_line > 1 else ""
            facts.setdefault(span.name, {
                "file": path,
                "first_line": span.first_line,
                "last_line": span.last_line,
                "template": bool(re.match(r"\s*template\b", above) or re.match(r"\s*template\b", lines[span.first_line - 1])),
                "shared": bool(SHARED.search(code)),
                "sync": bool(SYNC.search(code)),
            })
    return facts


def fetch(out: Path, mirror_root: Path | None) -> dict:
    manifest: dict = {"version": 1, "target_threads": TARGET_THREADS, "projects": {}, "programs": []}
    cache: dict[tuple[str, str], str] = {}

    def source(repo: tuple[str, str], path: str) -> str:
        if (repo[0], path) not in cache:
            cache[repo[0], path] = read_source(repo[0], repo[1], path, mirror_root)
        return cache[repo[0], path]

    for program in PROGRAMS:
        repo, commit = program.repo
        root = out / repo.replace("/", "+")
        manifest["projects"][repo] = {"commit": commit, "folder": root.name}
        entry = {
            "name": program.name,
            "project": repo,
            "commit": commit,
            "folder": f"{root.name}/{program.folder}",
            "sources": list(program.sources),
            "include_dirs": [f"{root.name}/{i}" for i in program.includes],
            "flags": list(program.flags),
            "files": [],
            "kernels": {},  # name → kernel_facts()
            "patches": [],
            "notes": list(program.notes),
            "skip_reason": program.skip_reason,
            "runs": [],
        }
        main_paths = {f"{program.folder}/{s}" for s in program.sources}
        paths = sorted(main_paths) + list(program.headers)
        defines: set[str] = set()
        texts: dict[str, str] = {}
        for path in paths:
            text = source(program.repo, path)
            if path in main_paths:
                text, applied = patched(text, program.patches)
                entry["patches"] += [{"file": f"{root.name}/{path}", **a} for a in applied]
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            relative = f"{root.name}/{path}"
            entry["files"].append(relative)
            texts[relative] = text
        entry["kernels"] = kernel_facts(texts)
        main_file = f"{program.folder}/{program.sources[0]}"
        if program.runs is not None:
            entry["runs"] = [{"argv": list(r.argv), "kernels": [{"name": k, "skip": 0} for k in r.kernels]}
                             for r in program.runs]
        elif not program.skip_reason and repo == LLMC[0]:
            text = source(program.repo, main_file)
            headers = "\n".join(source(program.repo, h) for h in program.headers)
            runs, notes = llmc_runs(text + "\n" + headers, defines)
            entry["runs"], entry["notes"] = runs, entry["notes"] + notes
        else:
            entry["runs"] = [{"argv": [], "kernels": [{"name": k, "skip": 0} for k in entry["kernels"]]}]
        manifest["programs"].append(entry)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=HERE / "realworld")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = fetch(args.out, args.mirror_root)
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    programs = [p for p in manifest["programs"] if not p["skip_reason"]]
    runs = sum(len(p["runs"]) for p in programs)
    kernels = sum(len(r["kernels"]) for p in programs for r in p["runs"])
    print(f"fetch_realworld: {len(programs)} programs, {runs} runs, {kernels} kernel launches to measure "
          f"→ {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
