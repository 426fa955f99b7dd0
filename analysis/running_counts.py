"""Running counts: a kernel's pointer parameters whose buffer a host-side scan fills before the launch
(`cub::DeviceScan::ExclusiveSum(tmp, bytes, flags, prefix_sum, n)`, `thrust::inclusive_scan(f, l, out)`,
`offsets = sizes.cumsum(0)`). The scan's output and the launch's argument are taken to their variables
(`reinterpret_cast<uint*>(prefix_sum.data_ptr<int>()) + 1` names `prefix_sum`), through a local read from one
(`int* d_out = output.data_ptr<int>();`) and through the host functions it is a parameter of (a helper that wraps
the scan, one that makes the launch: launch_sites.CallGraph), up a few calls; a launch argument with a name the
scan's output has is a running count.

Element k of a running count is how many items come before (or up to) k, so over consecutive k it never falls
and steps by what each item adds: `out[prefix_sum[t]] = in[t]` in the threads whose item counts is a compaction
scatter, consecutive slots whatever the data (the interpreter follows the sample where every item adds one,
marked values.ELECTED). Not where the kernel's slots are spaced by the data all the same (strides_follow_data).
The name alone (`psum`) is no evidence; a scan and a launch in different files are not connected, nor is a buffer
a kernel of the file fills with a scan of its own."""

from __future__ import annotations

import re

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.bounded_cache import remember
from cudalens.analysis.file_context import host_functions
from cudalens.analysis.launch_sites import CallGraph
from cudalens.analysis.reaching import declaration_of
from cudalens.analysis.syntax import enclosing_function, find
from cudalens.analysis.unit import Function, Unit

Node = ts.Node

MAX_WRAPPERS = 3  # host calls followed from a scan or a launch to the buffer's name
_CUB_OUTPUT = 3  # DeviceScan::…(d_temp_storage, temp_storage_bytes, d_in, d_out, num_items)
_POLICY = re.compile(r"thrust::(device|host|cuda)|execution::|\bpar\b|policy|exec")
_CASTS = re.compile(r"\b(reinterpret_cast|static_cast|const_cast)\s*<[^<>]*(<[^<>]*>[^<>]*)?>|"
                    r"\bthrust::raw_pointer_cast\b|\(\s*(const\s+)?[\w:]+\s*\*+\s*\)")
_NAME = re.compile(r"[A-Za-z_]\w*")
# the names queries/running_counts.scm matches, as a byte search over the file
_SCAN_NAMES = re.compile(rb"(InclusiveSum|ExclusiveSum|InclusiveScan|ExclusiveScan|inclusive_scan|exclusive_scan|cumsum)")

_cache: dict[str | bytes, dict[str, dict[str, str]]] = {}


def running_counts(unit: Unit, kernel: Function, host_key: str = "") -> dict[str, str]:
    """The kernel's parameters a launch in this file passes a running count, each with what says so ("the
    `cub::DeviceScan::ExclusiveSum` on line 351 fills `prefix_sum`"). What the host code says is kept under
    `host_key` (a digest of the text outside kernel bodies, FileContext.host_key): typing in a kernel reuses it."""
    key = host_key or unit.source
    per_kernel = _cache.get(key)
    if per_kernel is None:
        per_kernel = remember(_cache, key, _launch_evidence(unit), 16)
    found = per_kernel.get(kernel.name, {})
    return {p: e for p, e in found.items() if not strides_follow_data(kernel, p)} if found else found


def _launch_evidence(unit: Unit) -> dict[str, dict[str, str]]:
    """Per kernel, its parameters a launch of the file passes a buffer a scan fills, and the scan."""
    if not _SCAN_NAMES.search(unit.source):
        return {}  # a text search first: the query and the call graph cost 12 ms on a 3,000-line file
    scans = find(unit.tree.root_node, "scan", "running_counts")
    if not scans:
        return {}
    calls = CallGraph(unit, host_functions(unit, own=False))
    filled: dict[str, str] = {}  # buffer name → what fills it
    for call in scans:
        name = ts.text(call.child_by_field_name("function"))
        output = _output(call, name)
        if output is None:
            continue
        evidence = f"the `{' '.join(name.split())}` on line {call.start_point[0] + 1} fills `{ts.text(output)}`"
        for root in _names(output, calls):
            filled.setdefault(root, evidence)
    out: dict[str, dict[str, str]] = {}
    kernels = {f.name: f for fs in unit.functions.values() for f in fs if f.is_kernel}
    for launch in unit.launches:
        kernel = kernels.get(launch.kernel)
        if kernel is None:
            continue
        args = ts.arguments(launch.node.child_by_field_name("arguments"))
        for param, arg in zip(kernel.params, args, strict=False):
            evidence = next((filled[r] for r in _names(arg, calls) if r in filled), "") if param.pointer else ""
            if evidence:
                out.setdefault(kernel.name, {})[param.name] = evidence
    return out


def strides_follow_data(kernel: Function, name: str) -> bool:
    """Whether how far apart the threads' slots are is the data's even with the count known: a loop of the kernel
    runs from one count to another (`for (j = row_ptr[r]; j < row_ptr[r + 1]; ++j)`, a CSR row: each thread walks
    a segment whose start is the data's), directly or through a variable it reads them into, or a thread advances
    its slot under a condition it did not read the count under (`if (o & (1 << j)) out[base++] = …`: each thread
    writes as many slots as its data say, so where the next thread's begin is the data's)."""
    names = {name}
    reads: list[Node] = []
    for node in find(kernel.body, "assigned"):
        parent = node.parent
        value = parent.child_by_field_name("value" if parent.type == "init_declarator" else "right") \
            if parent is not None else None
        if value is not None and ts.identifiers(value) & names:
            names |= ts.identifiers(node)
            reads.append(node)
    for loop in find(kernel.body, "loop"):
        parts = [loop.child_by_field_name(f) for f in ("initializer", "condition")]
        if any(part is not None and ts.identifiers(part) & names for part in parts):
            return True
    for node in find(kernel.body, "assigned"):
        parent = node.parent
        if parent is None or parent.type == "init_declarator" or node in reads \
                or node.type != "identifier" or ts.text(node) not in names - {name}:
            continue
        branch = parent
        while branch is not None and branch != kernel.body:
            if branch.type in ("if_statement", "conditional_expression", "switch_statement") and not any(
                    branch.start_byte <= r.start_byte and r.end_byte <= branch.end_byte for r in reads):
                return True
            branch = branch.parent
    return False


def _names(expression: Node, calls: CallGraph) -> list[str]:
    """The names a host expression's buffer has: its variable, what a local it reads was initialised from
    (`int* d_out = output.data_ptr<int>();`), and where that is a parameter of its host function, what the calls
    of that function pass there, up a few calls (a helper that wraps a scan, or a launch)."""
    names: list[str] = []
    pending = [(expression, 0)]
    while pending:
        node, depth = pending.pop()
        root = root_name(node)
        host = calls.function(enclosing_function(node, lambdas=False))
        if not root or root in names or host is None:
            continue
        names.append(root)
        declared = declaration_of(root, host.body, node.start_byte, calls.unit.declarations)
        initial = declared[1] if declared is not None else None
        if initial is not None:
            pending.append((initial, depth))
            continue
        position = next((i for i, p in enumerate(host.params) if p.name == root), None)
        if position is None or depth >= MAX_WRAPPERS:
            continue
        for _, call in calls.calls.get(host.name, []):
            args = ts.arguments(call.child_by_field_name("arguments"))
            if position < len(args):
                pending.append((args[position], depth + 1))
    return names


def _output(call: Node, name: str) -> Node | None:
    """The expression a scan writes: CUB's `d_out`, thrust's and std's result iterator, what a cumsum is
    assigned to."""
    args = ts.arguments(call.child_by_field_name("arguments"))
    last = name.rsplit("::", 1)[-1].rsplit(".", 1)[-1]
    if last in ("InclusiveSum", "ExclusiveSum", "InclusiveScan", "ExclusiveScan"):
        return args[_CUB_OUTPUT] if len(args) > _CUB_OUTPUT else None
    if last in ("inclusive_scan", "exclusive_scan"):
        if args and _POLICY.search(ts.text(args[0])):
            args = args[1:]
        return args[2] if len(args) > 2 else None
    parent = call.parent
    if parent is not None and parent.type == "init_declarator":
        return parent.child_by_field_name("declarator")
    if parent is not None and parent.type == "assignment_expression":
        return parent.child_by_field_name("left")
    return None


def root_name(node: Node) -> str:
    """The variable an argument names, past casts, `.data_ptr<T>()`, `&x[0]` and an offset: `prefix_sum` of
    `reinterpret_cast<uint*>(prefix_sum.data_ptr<int>()) + 1`; "" for anything else."""
    text = _CASTS.sub(" ", ts.text(node)).lstrip(" (&*")
    match = _NAME.match(text)
    if match is None or re.match(r"\s*(::|\(|<)", text[match.end():]):
        return ""  # a call's result (`at::empty(…)`, `make_buffer(n)`): a new buffer, not a name of one
    return match.group(0)


