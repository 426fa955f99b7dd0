"""The fixed-size arrays a kernel declares in its own body (`__shared__ float tile[32][33]`, `float acc[64]`),
with their sizes where the compiler knows them: literals, macros, file-scope and local constants, and an element
type that is a template parameter when the caller says what to take for it. Dimensions from template
parameters or anything else stay unknown (None). Of declarations in `#if`/`#else` arms, only the arm the unit's
macros select counts (Unit.compiled); where they cannot tell, one name declared in two arms counts once (the first arm's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.conditions import branch_conditions
from cudalens.analysis.host_eval import eval_host
from cudalens.analysis.syntax import find
from cudalens.analysis.unit import Function, Unit

Node = ts.Node


@dataclass(frozen=True)
class ArrayDecl:
    node: Node  # the declaration statement
    declarator: Node  # the array_declarator
    name: str
    shared: bool
    dims: tuple[int | None, ...]
    elem_bytes: int | None
    elem_param: str = ""  # the template parameter the element type is, when it is one

    @property
    def bytes(self) -> int | None:
        if self.elem_bytes is None or any(d is None for d in self.dims):
            return None
        total = self.elem_bytes
        for d in self.dims:
            total *= d  # type: ignore[operator]
        return total


def _is_shared(declaration: Node) -> bool:
    return any(ts.text(c) == "__shared__" for c in declaration.children
               if c.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier"))


def _array(declarator: Node) -> Node | None:
    if declarator.type == "init_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator if declarator is not None and declarator.type == "array_declarator" else None


def array_declarations(unit: Unit, function: Function,
                       template_bytes: Mapping[str, int] | None = None) -> list[ArrayDecl]:
    """The kernel's own fixed-size arrays; `template_bytes`: the element size to take for an element type
    that is a template parameter (`__shared__ scalar_t a[512][512]`), unknown without it."""
    out = []
    arms: dict[str, tuple] = {}  # name → the `#if` conditions of the arm its kept declaration sits in
    for node in find(function.body, "declaration"):
        compiled = unit.compiled(node)
        if compiled is False:
            continue  # an `#if` arm the unit's macros leave out
        storage = {ts.text(c) for c in node.children if c.type == "storage_class_specifier"}
        shared = _is_shared(node)
        if "extern" in storage or ("static" in storage and not shared):
            continue  # extern __shared__ is the dynamic allocation; a static local array is a global one
        type_node = node.child_by_field_name("type")
        type_text = ts.text(type_node) if type_node is not None else ""
        info = unit.types.lookup(type_text) if type_node is not None else None
        param = type_text if template_bytes is not None and type_text in template_bytes else ""
        for d in node.children_by_field_name("declarator"):
            arr = _array(d)
            if arr is None:
                continue
            dims: list[int | None] = []
            inner: Node | None = arr
            while inner is not None and inner.type == "array_declarator":
                size = inner.child_by_field_name("size")
                value = eval_host(size, unit, function.body) if size is not None else None
                dims.append(value[0] if value is not None and value[0] > 0 else None)
                inner = inner.child_by_field_name("declarator")
            if inner is None or inner.type != "identifier":
                continue  # an array of pointers or something stranger: its element size is not the type's
            decl = ArrayDecl(node, arr, ts.text(inner), shared, tuple(reversed(dims)),
                             template_bytes[param] if param else info.size if info is not None else None, param)
            if compiled is None:
                # arms no macro decides: one name declared in two of them is one array, the first arm's, the
                # one the lane interpreter runs (simulate.Interpreter.exec)
                conditions = branch_conditions(node)
                if arms.setdefault(decl.name, conditions) != conditions:
                    continue
            out.append(decl)
    return out


def static_shared_bytes(unit: Unit, function: Function) -> tuple[int, bool]:
    """The bytes of the known static `__shared__` arrays, and whether every one of them is known."""
    decls = [a for a in array_declarations(unit, function) if a.shared]
    known = [a.bytes for a in decls if a.bytes is not None]
    return sum(known), len(known) == len(decls)
