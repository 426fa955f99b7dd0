"""Whose kernels did a call's work: the device time of the kernels one call launched (torch.profiler, the timing's
`kernels`), split into the file's own `__global__` functions and the rest — ATen, cuBLAS, cuDNN, Thrust or CUB
instantiated elsewhere, copies and memsets.

A file that defines kernels must carry the work with them: when its own kernels carry less than half of the call's
device time, the test fails with CL907 naming the kernels that did the work and their shares. This closes the class
"the extension's C++ computes the result with ATen while the file's kernel does little or nothing" whatever the C++
calls, where reading the Python side could not. Helper launches (a memset, a fill, a small copy) are a small share
of an honest call. A kernel counts as the file's own when its name is one of the file's `__global__` functions and
its namespaces are ones the file declares: a file cannot claim `at::native::…` by naming a kernel the same.
Standard library only.
"""

from __future__ import annotations

import re
from typing import Any

from .. import anti_cheat, results

OWN_SHARE_MIN = 0.5
_NAMESPACE = re.compile(r"\bnamespace\s+([A-Za-z_]\w*)")
_ANONYMOUS = "(anonymous namespace)"


def _qualified(name: str) -> list[str]:
    """`void ns::k<float>(float*)` → ["ns", "k"]: the name's scopes, without template arguments or parameters."""
    depth, out = 0, []
    for ch in name.replace(_ANONYMOUS, "@anon"):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    words = "".join(out).split()
    return (words[-1] if words else "").split("::")


def is_own(name: str, kernels: set[str], namespaces: set[str]) -> bool:
    """`name` (as the profiler reports a launch) is one of the file's kernels."""
    *scopes, base = _qualified(name)
    return base in kernels and all(s == "@anon" or s in namespaces for s in scopes)


def attribute(launched: tuple[tuple[str, float], ...], kernels: list[str], source: str) -> Any:
    """The `Attribution` of one call's kernels (name, device ms) to the file whose text is `source`."""
    own_names, namespaces = set(kernels), set(_NAMESPACE.findall(source))
    own = sum(ms for name, ms in launched if is_own(name, own_names, namespaces))
    others = tuple((name, ms) for name, ms in launched if not is_own(name, own_names, namespaces))
    return results.Attribution(own, others)


def finding(attribution: Any) -> Any:
    """CL907 when the file's kernels carry less than `OWN_SHARE_MIN` of the call's device time, else None."""
    share = attribution.own_share
    if not attribution.total_ms or share >= OWN_SHARE_MIN:
        return None
    total = attribution.total_ms
    named = ", ".join(f"{_short(n)} {ms / total:.0%}" for n, ms in attribution.others[:3])
    return anti_cheat.finding(
        "library-kernels",
        f"the file's own kernels carry {share:.0%} of the call's device time; the work is done by {named}"
        f"{', …' if len(attribution.others) > 3 else ''} (at least {OWN_SHARE_MIN:.0%} must be the file's own)",
        0,
    )


def _short(name: str, limit: int = 120) -> str:
    """A launch's name without its return type and parameters, cut to `limit`: what the user needs to see."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i:
            name = name[:i]
            break
    name = name.removeprefix("void ").strip()
    return name if len(name) <= limit else name[: limit - 1] + "…"
