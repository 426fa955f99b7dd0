"""Verdicts for kernels that do not work: the critical issue, why it matters, the minimal fix
(CudaForge's correction feedback), from the compiler log, the test outcome and the static findings."""

from __future__ import annotations

import re

from cudalens.agents.judge.inputs import JudgeInput
from cudalens.agents.judge.verdict import Evidence, Verdict

# first matching compiler message → the smallest fix that usually resolves it
_COMPILE_HINTS = (
    (
        r"identifier \"(\w+)\" is undefined|'(\w+)' was not declared",
        "Declare or include `{0}` before its use (a missing #include, a typo, or a helper defined below its caller).",
    ),
    (
        r"no instance of (overloaded )?function|no matching function",
        "Call the function with argument types one of its overloads accepts (cast, or use the float/half variant).",
    ),
    (
        r"a value of type .* cannot be (used to initialize|assigned)",
        "Make the types agree: cast explicitly or change the variable's type.",
    ),
    (
        r"expected a \"?[;)\]}]\"?|expected an expression",
        "Fix the syntax at the reported line (a missing ';', ')' or '}').",
    ),
    (
        r"too many resources requested|uses too much shared data",
        "Reduce shared memory or threads per block below the device limit.",
    ),
    (
        r"undefined symbol|undefined reference",
        'The binding names a function that is not defined (or not `extern "C"`/exported): make the C++ declaration '
        "and the definition agree.",
    ),
    (r"ModuleNotFoundError|ImportError", "Import only what the worker has: torch and the standard library."),
    (r"SyntaxError", "Fix the Python syntax error at the reported line."),
)
_FINDING_HINTS = {
    "CL302": "a __syncthreads() inside a thread-dependent branch can deadlock or corrupt shared data",
    "CL303": "shared memory is read before the barrier that orders the writes (a race)",
    "CL1": "an indexing expression may run past the tensor's extent",
}


# a compiler's own message ("cuda.cu(28): error: …", "main.cpp:7:3: error: …"), before any other line with "error"
_COMPILER_ERROR = re.compile(r"(?:\(\d+\)|:\d+(?::\d+)?):\s*(?:fatal\s+)?error\b")
# a traceback's source line ("    raise RuntimeError(message) from e") names an error class, not the error
_TRACEBACK_SOURCE = re.compile(r"^\s+(?:raise\b|File \")")


def _first_error(log: str) -> tuple[str, int | None]:
    lines = log.splitlines()
    found = next((ln for ln in lines if _COMPILER_ERROR.search(ln)), None) or next(
        (ln for ln in lines if re.search(r"\berror\b|Error:|Error\b", ln) and not _TRACEBACK_SOURCE.match(ln)), None
    )
    if found is not None:
        m = re.search(r"\((\d+)\)|:(\d+):", found)
        return found.strip()[:300], int(next(g for g in m.groups() if g)) if m else None
    tail = [ln for ln in log.strip().splitlines() if ln.strip()]
    return (tail[-1].strip()[:300] if tail else "the build failed without a message"), None


def failing_verdict(inp: JudgeInput) -> Verdict | None:
    """The verdict for a kernel that cheats, does not compile, crashes, hangs or computes the wrong result;
    None when nothing failed."""
    rejects = [c for c in inp.cheats if c.severity == "reject"]
    if rejects:
        c = rejects[0]
        return Verdict(
            inp.kernel,
            "failing",
            f"Candidate rejected: {c.message}",
            critical_issue=c.message,
            why_it_matters="The speedup would not come from the kernel: the test or the timer is being gamed, so "
            "the candidate cannot be accepted whatever it measures.",
            fix_hint="Do the main computation in the CUDA kernel, without fallbacks to PyTorch, cached or "
            "constant outputs, side streams or patched timers.",
            evidence=tuple(
                Evidence(f"anti-cheat:{r.check}", r.message, "rejected", r.line or None) for r in rejects
            ),
        )
    if inp.compile is not None and not inp.compile.ok:
        message, line = _first_error(inp.compile.log)
        hint = "Fix the first compiler error; later ones often follow from it."
        for pattern, text in _COMPILE_HINTS:
            m = re.search(pattern, inp.compile.log)
            if m:
                # not str.format: the hints hold literal braces ("a missing '}'")
                hint = text.replace("{0}", next((g for g in m.groups() if g), ""))
                break
        return Verdict(
            inp.kernel,
            "failing",
            f"Does not compile: {message}",
            critical_issue=message,
            why_it_matters="Nothing can be tested or timed until the extension builds.",
            fix_hint=hint,
            evidence=(Evidence("compiler", message, "first error", line),),
        )
    c = inp.correctness
    if c is None or c.status in ("passed", "not_run"):
        return None
    related = [f for f in inp.findings for code in _FINDING_HINTS if f.code.startswith(code)]
    evidence = [
        Evidence(
            f.code,
            f.message,
            _FINDING_HINTS[next(k for k in _FINDING_HINTS if f.code.startswith(k))],
            f.span.line,
        )
        for f in related[:3]
    ]
    if c.status == "timeout":
        return Verdict(
            inp.kernel,
            "failing",
            "Hangs: killed at the worker's time limit",
            critical_issue=c.message or "the candidate never finished",
            why_it_matters="A kernel or host loop that does not terminate blocks every later step.",
            fix_hint="Look for a loop whose bound never changes, a barrier not reached by every thread of the "
            "block, or a spin on a flag no other thread sets.",
            evidence=(Evidence("status", "timeout", c.message), *evidence),
        )
    if c.status == "crashed":
        illegal = re.search(
            r"illegal memory access|out of bounds|misaligned address", c.message + c.traceback, re.I
        )
        return Verdict(
            inp.kernel,
            "failing",
            f"Crashes: {c.message}",
            critical_issue=c.message,
            why_it_matters="A crash aborts the test; an illegal access can also corrupt later results.",
            fix_hint="Guard every global index with the tensor's size (`if (i < n)`) and size the grid with a "
            "ceiling division."
            if illegal
            else "Read the traceback's last frame in the candidate and fix that "
            "call (argument types, shapes, device of the tensors).",
            evidence=(Evidence("status", "crashed", c.message), *evidence),
        )
    abs_err = c.max_abs_error
    return Verdict(
        inp.kernel,
        "failing",
        f"Wrong result: {c.message}",
        critical_issue=c.message,
        why_it_matters=f"Passed {c.passed_trials} of {c.trials} trials against the PyTorch reference; speed does not "
        "matter until every trial matches.",
        fix_hint=evidence[0].meaning.capitalize() + ": fix that first."
        if evidence
        else "Check the index mapping against the reference's layout, the boundary elements of the last block, the "
        "initial value of accumulators, and that every partial result is combined exactly once.",
        evidence=(
            Evidence("max_abs_error", abs_err if abs_err is not None else "n/a", "worst difference"),
            *evidence,
        ),
    )
