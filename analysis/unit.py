"""Facts of one CUDA translation unit: kernels, device helpers, macros, structs, launch sites, includes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, partial

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.bounded_cache import remember
from cudalens.analysis.conditions import branch_conditions, holds
from cudalens.analysis.nesting import Deep, too_deep
from cudalens.analysis.reaching import assigned
from cudalens.analysis.types import StructDef, TypeTable

Node = ts.Node


@dataclass
class Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str


@dataclass
class Param:
    name: str
    type_text: str
    pointer: bool
    node: Node

    @property
    def reference(self) -> bool:
        """`uint &keyA`: the argument's location, not its value, is bound to the name, and the function may
        store through it (a `const` reference is read like a value: nvcc loads it once)."""
        d = self.node.child_by_field_name("declarator")
        return d is not None and d.type == "reference_declarator" and not ts.text(d).startswith("&&") \
            and "const" not in self.type_text.split()


@dataclass
class Function:
    name: str
    node: Node  # function_definition
    body: Node | None
    declarator: Node  # the function_declarator; parameters are read from it only when asked for
    is_kernel: bool
    is_device: bool
    template_params: list[str] = field(default_factory=list)
    launch_bounds: tuple[Node, ...] = ()
    _params: list[Param] | None = field(default=None, repr=False)
    from_header: bool = False  # defined in an #include'd header: its positions are not the file's
    # The `template <...>` declaration it is written in, and the comments right above it (or above that
    # declaration), as the file-scope walk found them: `Node.parent` and `prev_sibling` walk down from the root,
    # past every declaration before this one, which made each kernel of a 20,000-line file cost ~10 µs an edit.
    template: Node | None = field(default=None, repr=False)
    comments_above: tuple[Node, ...] = field(default=(), repr=False)
    # the declarator's text, `name(params)` (launch configurations are kept by it): read with the head's shape
    signature: str = field(default="", repr=False)

    @property
    def name_node(self) -> Node:
        """Where its name is written (the whole definition when it has none)."""
        return self.declarator.child_by_field_name("declarator") or self.node

    @property
    def params(self) -> list[Param]:
        if self._params is None:
            self._params = _params(self.declarator)
        return self._params


@dataclass
class Launch:
    kernel: str
    node: Node  # the call expression
    host_function: Node | None
    # what names the kernel when the call goes through a variable: `&k<Ktraits>` of `auto kernel = &k<Ktraits>;`
    named_by: Node | None = None

    # Read when a launch's values are worked out, which typing inside a kernel does not do (launch_configs
    # keeps them by the host text): each edit of a 20,000-line file made 420 launches' lists for nothing.
    @cached_property
    def config(self) -> list[Node]:
        """grid, block, shared bytes, stream"""
        syntax = next((c for c in self.node.children if c.type == "kernel_call_syntax"), None)
        return list(syntax.named_children) if syntax is not None else []

    @cached_property
    def template_args(self) -> list[Node]:
        return callee(self.named_by or self.node.child_by_field_name("function"))[2]


@dataclass
class LeftOut:
    """A file-scope declaration deeper than nesting.MAX_NESTING: none of the unit's facts come from it (no
    kernel, helper, launch or constant), and the CL002 finding says why."""

    node: Node
    function: Function | None  # when it is a function definition
    deep: Deep


@dataclass
class Unit:
    tree: ts.Tree
    source: bytes
    macros: dict[str, Macro]
    types: TypeTable
    functions: dict[str, list[Function]]
    launches: list[Launch]
    includes: list[str]
    constants: dict[str, Node]  # file-scope `const int N = 1024;` / constexpr
    # Structs whose conversion returns the dynamic shared memory (cuda-samples' `SharedMemory<T>()` idiom).
    shared_accessors: set[str] = field(default_factory=set)
    left_out: list[LeftOut] = field(default_factory=list)
    # Object-like macros that spell `__global__` or `__device__` in one of their definitions (`#define CUML_KERNEL
    # __global__ static` under `#ifdef __CUDACC__`, `#else` plain `static`): name → that definition's body. The
    # analysis reads CUDA as nvcc compiles it, with `__CUDACC__` defined.
    qualifier_macros: dict[str, str] = field(default_factory=dict)
    # declarations per scope (function body), made on first use (declaration_of), and host_eval's tables
    declarations: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def kernels(self) -> list[Function]:
        """(Once: `include` adds a header's helpers, never its kernels.)"""
        return [f for fs in self.functions.values() for f in fs if f.is_kernel]

    @property
    def defined_names(self) -> frozenset[str]:
        """The functions this file itself defines (with a body), kernels or not: a launch here of one of those
        names is of this definition (bh.cu's own `TreeBuildingKernel`, whose `CUML_KERNEL` macro it never
        includes), never of a same-named kernel in a file it does not include (launch_index._counts)."""
        return frozenset(name for name, fs in self.functions.items()
                         if any(f.body is not None and not f.from_header for f in fs))

    @cached_property
    def definitions_key(self) -> int:
        """Changes whenever a macro, file-scope constant or struct does (what host-side values depend on)."""
        macros = sorted((m.name, m.params, m.body) for m in self.macros.values())
        constants = sorted((name, ts.text(node)) for name, node in self.constants.items())
        return hash((repr(macros), repr(constants), self.types.key()))

    def include(self, header: Unit) -> None:
        """Make a header's macros, structs, constants and helpers visible (the file's own win)."""
        for name, macro in header.macros.items():
            self.macros.setdefault(name, macro)
        for name, body in header.qualifier_macros.items():
            self.qualifier_macros.setdefault(name, body)
        self.types.merge(header.types, _object_macros(self.macros))
        for name, node in header.constants.items():
            self.constants.setdefault(name, node)
        self.shared_accessors |= header.shared_accessors
        for name, fs in header.functions.items():
            if name not in self.functions:
                self.functions[name] = [replace(f, from_header=True) for f in fs if not f.is_kernel]
        _mark_macro_qualified(self.functions, self.qualifier_macros)

    def compiled(self, node: Node) -> bool | None:
        """Whether the `#if` branches around `node` are the ones the unit's macros select (True outside any);
        None when a condition cannot be evaluated (conditions.holds)."""
        conditions = branch_conditions(node)
        return holds(conditions, _object_macros(self.macros)) if conditions else True

    def device_function(self, name: str, arity: int | None = None) -> Function | None:
        """The `__device__` helper a call names (a host function of the same name is not one: cuda-samples'
        host `reduce<T>()` beside kernels calling `cg::reduce`); with `arity`, the overload that takes that many
        arguments if there is one (llm.c's `blockReduce<op>(val)` and `blockReduce<op>(val, sync, init)`)."""
        found = [f for f in self.functions.get(name, []) if f.is_device and not f.is_kernel and f.body is not None]
        if arity is not None:
            for f in found:
                required = sum(p.node.type != "optional_parameter_declaration" for p in f.params)
                if required <= arity <= len(f.params):
                    return f
        return found[0] if found else None


def _declarator_name(node: Node | None) -> tuple[str, bool]:
    """The identifier a declarator declares, and whether it declares a pointer or array (for params)."""
    pointer = False
    while node is not None and node.type not in ("identifier", "field_identifier"):
        if node.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
            pointer = pointer or node.type != "reference_declarator"
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in node.named_children if c.type in ("identifier", "field_identifier")), None)
        node = nxt
    return (ts.text(node) if node is not None else ""), pointer


def pointer_depth(param: Node) -> int:
    """How many pointer levels a parameter declares: `float* x` 1, `float** x` and `float* const* x` 2."""
    depth, node = 0, param.child_by_field_name("declarator")
    while node is not None and node.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
        depth += node.type != "reference_declarator"
        node = node.child_by_field_name("declarator")
    return depth


def lambda_params(lambda_node: Node) -> list[Param]:
    """The parameters of a lambda expression (`[&r](unsigned idx) { ... }`)."""
    declarator = lambda_node.child_by_field_name("declarator")
    return _params(declarator) if declarator is not None else []


def _params(declarator: Node) -> list[Param]:
    plist = declarator.child_by_field_name("parameters")
    out = []
    for p in plist.named_children if plist is not None else []:
        if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        name, pointer = _declarator_name(p.child_by_field_name("declarator"))
        type_node = p.child_by_field_name("type")
        quals = " ".join(ts.text(c) for c in p.children if c.type == "type_qualifier")
        out.append(Param(name, f"{quals} {ts.text(type_node) if type_node else ''}".strip(), pointer, p))
    return out


# What _function read from a definition, by the text it read it from (its `template <...>` line and its head, up
# to the body): an edit re-reads only the definitions it changed (a 20,000-line file holds 2,300).
_SHAPES_LIMIT = 16384
_shapes: dict[bytes, tuple[str, int, bool, bool, tuple[str, ...], bool, str]] = {}


def _function(node: Node, parent: Node | None, comments_above: tuple[Node, ...] = (),
              source: bytes | None = None) -> Function | None:
    """The function `node` defines; `parent` is the node it is a child of; `source`, the tree's text, when the
    definition's shape may come from (and go to) the memo."""
    body = node.child_by_field_name("body")
    template = parent if parent is not None and parent.type == "template_declaration" else None
    key = None
    if source is not None:
        head = source[template.start_byte if template is not None else node.start_byte:
                      body.start_byte if body is not None else node.end_byte]
        key = (b"T" if template is not None else b"F") + head
        shape = _shapes.get(key)
        made = _from_shape(node, body, template, comments_above, shape) if shape is not None else None
        if made is not None:
            return made
    declarator, depth = node.child_by_field_name("declarator"), 1
    while declarator is not None and declarator.type != "function_declarator":
        declarator, depth = declarator.child_by_field_name("declarator"), depth + 1
    if declarator is None:
        return None
    name_node = declarator.child_by_field_name("declarator")
    name = ts.text(name_node).split("::")[-1] if name_node is not None else ""
    children = node.children
    tokens = {c.type for c in children}
    template_params: list[str] = []
    if template is not None:
        tparams = template.child_by_field_name("parameters")
        for tp in tparams.named_children if tparams is not None else []:
            pname, _ = _declarator_name(tp.child_by_field_name("declarator") or tp.child_by_field_name("name"))
            if not pname:
                ident = next((c for c in tp.named_children if c.type in ("identifier", "type_identifier")), None)
                pname = ts.text(ident) if ident is not None else ""
            template_params.append(pname)
    bounds = tuple(c for c in children if c.type == "launch_bounds")
    signature = ts.text(declarator)
    if key is not None:
        remember(_shapes, key, (name, depth, "__global__" in tokens, "__device__" in tokens, tuple(template_params),
                                bool(bounds), signature), _SHAPES_LIMIT)
    return Function(
        name=name,
        node=node,
        body=body,
        declarator=declarator,
        is_kernel="__global__" in tokens,
        is_device="__device__" in tokens,
        template_params=template_params,
        launch_bounds=tuple(n for b in bounds for n in b.named_children),
        template=template,
        comments_above=comments_above,
        signature=signature,
    )


def _from_shape(node: Node, body: Node | None, template: Node | None, comments_above: tuple[Node, ...],
                shape: tuple[str, int, bool, bool, tuple[str, ...], bool, str]) -> Function | None:
    """The Function of a definition whose head was read before: its nodes, the rest from the memo (None when
    the tree is not shaped as it was, which the same text makes it)."""
    name, depth, is_kernel, is_device, template_params, has_bounds, signature = shape
    declarator = node
    for _ in range(depth):
        declarator = declarator.child_by_field_name("declarator")
        if declarator is None:
            return None
    if declarator.type != "function_declarator":
        return None
    # (2,400 definitions an edit on 20,000 lines: no generator where there are no bounds)
    bounds = tuple(n for c in node.children if c.type == "launch_bounds" for n in c.named_children) \
        if has_bounds else ()
    return Function(name, node, body, declarator, is_kernel, is_device, list(template_params), bounds,
                    template=template, comments_above=comments_above, signature=signature)


def _struct_def(body: Node, align: int, params: tuple[str, ...]) -> StructDef:
    """A struct body's data members (with their element counts as written) and `static constexpr` members;
    methods, constructors and comments are skipped."""
    members: list[tuple[str, str, str]] = []
    statics: list[tuple[str, str]] = []
    aliases: list[tuple[str, str]] = []
    for decl in body.named_children:
        if decl.type == "alias_declaration":  # using input_t = input_t_;
            name_node, target = decl.child_by_field_name("name"), decl.child_by_field_name("type")
            if name_node is not None and target is not None:
                aliases.append((ts.text(name_node), ts.text(target)))
            continue
        if decl.type not in ("field_declaration", "declaration"):  # `__align__` structs hold declarations
            continue
        type_node = decl.child_by_field_name("type")
        if type_node is None:
            continue
        static = any(ts.text(c) == "static" for c in decl.children if c.type == "storage_class_specifier")
        if static:
            value = decl.child_by_field_name("default_value")
            for d in decl.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    value, d = d.child_by_field_name("value"), d.child_by_field_name("declarator")
                name, _ = _declarator_name(d)
                if name and value is not None:
                    statics.append((name, ts.text(value)))
            continue
        for d in decl.children_by_field_name("declarator"):
            if d.type == "function_declarator":
                continue
            count = ""
            if d.type == "array_declarator":
                size = d.child_by_field_name("size")
                count = ts.text(size) if size is not None else "0"
            name, pointer = _declarator_name(d)
            members.append((name, "size_t" if pointer and d.type != "array_declarator" else ts.text(type_node),
                            count))
    return StructDef(tuple(members), tuple(statics), align, params, tuple(aliases))


def _alignment(node: Node | None) -> int:
    """N of `alignas(N)` on a struct (cuda-samples' `__align__(N)` is read where the parser mistakes it)."""
    for c in node.named_children if node is not None else []:
        if c.type == "alignas_qualifier":
            number = next((n for n in c.named_children if n.type == "number_literal"), None)
            text = ts.text(number) if number is not None else ""
            return int(text) if text.isdigit() else 1
    return 1


def _template_params(node: Node) -> tuple[str, ...]:
    parent = node.parent
    if parent is None or parent.type != "template_declaration":
        return ()
    tparams = parent.child_by_field_name("parameters")
    names = []
    for tp in tparams.named_children if tparams is not None else []:
        ident = next((c for c in tp.named_children if c.type in ("type_identifier", "identifier")), None)
        name, _ = _declarator_name(tp.child_by_field_name("declarator") or tp.child_by_field_name("name"))
        names.append(name or (ts.text(ident) if ident is not None else ""))
    return tuple(names)


def template_parameters(node: Node) -> list[tuple[str, Node | None]]:
    """For each template parameter of the declaration `node` (a struct, a function): its kind ("type", "bool" or
    "value") and its default's node (`int MODE = 2` → the `2`; None without one)."""
    parent = node.parent
    tparams = parent.child_by_field_name("parameters") if parent is not None and \
        parent.type == "template_declaration" else None
    out: list[tuple[str, Node | None]] = []
    for tp in tparams.named_children if tparams is not None else []:
        if tp.type in ("type_parameter_declaration", "optional_type_parameter_declaration",
                       "variadic_type_parameter_declaration"):
            out.append(("type", None))
        else:
            type_node = tp.child_by_field_name("type")
            out.append(("bool" if type_node is not None and ts.text(type_node) == "bool" else "value",
                        tp.child_by_field_name("default_value")))
    return out


# (`match` anchors it where a declaration starts, in the node's text or in the file's)
_ALIGN_MISPARSE = re.compile(rb"\s*(?:typedef\s+)?struct\s+__align__\s*\(\s*(\d+)\s*\)")


def _aligned_struct(node: Node, types: TypeTable) -> bool:
    """`struct __align__(8) SumMax { ... };`, which tree-sitter reads as a function `__align__(8) SumMax`: the
    struct it is, when it is one."""
    spec = node.child_by_field_name("type")
    if spec is None or spec.type != "struct_specifier" or spec.end_byte - spec.start_byte > 20:
        return False  # `struct __align__` is the misparsed type; a real function's is anything else
    m = _ALIGN_MISPARSE.match(node.text or b"")
    body = node.child_by_field_name("body")
    declarator = node.child_by_field_name("declarator")
    if m is None or body is None or declarator is None or declarator.type != "parenthesized_declarator":
        return False
    name = next((c for c in declarator.named_children if c.type == "identifier"), None)
    if name is None:
        return False
    types.definitions[ts.text(name)] = _struct_def(body, int(m.group(1)), ())
    return True


@lru_cache(maxsize=64)
def header_unit(source: bytes) -> Unit:
    """A header's unit, shared by every file that includes the same text."""
    return build_unit(source)


# what build_unit takes facts from, and so measures first (nesting.py)
_MEASURED = ("function_definition", "declaration", "struct_specifier", "type_definition", "alias_declaration")
_CONTAINERS = ("linkage_specification", "declaration_list", "template_declaration", "namespace_definition",
               "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif")


def _top_level(root: Node):
    """Declarations at file scope, looking inside extern "C" blocks, namespaces, templates and #if blocks: each
    with the node it is a child of and the comments right above it (for one inside a `template <...>`
    declaration, those above the template)."""
    stack: list[tuple[Node, Node, tuple[Node, ...]]] = []
    _push_children(stack, root, ())
    while stack:
        node, parent, above = stack.pop()
        if node.type in _CONTAINERS:
            _push_children(stack, node, above)
        else:
            yield node, parent, above


def _push_children(stack: list, container: Node, above: tuple[Node, ...]) -> None:
    """`container`'s named children onto `stack`, the first on top. (A template's own comments are those above
    it; anything but a comment between a comment and a declaration ends the run, as `prev_sibling` would.)"""
    out = []
    run: list[Node] = []
    template = container.type == "template_declaration"
    for child in container.children:
        if child.type == "comment":
            run.append(child)  # (a comment itself needs none: a run of 10,000 stays linear)
            out.append((child, container, ()))
            continue
        if child.is_named:
            out.append((child, container, above if template else tuple(run)))
        run = []
    stack.extend(reversed(out))


def build_unit(source: bytes, tree: ts.Tree | None = None) -> Unit:
    """The unit's facts from a walk over file-scope declarations (a whole-tree query costs tens of
    milliseconds on a 3,000-line file; this walk touches only the top level, and launch sites are looked for
    only inside functions whose text has `<<<`)."""
    tree = tree or ts.parse_cuda(source)
    macros: dict[str, Macro] = {}
    types = TypeTable()
    functions: dict[str, list[Function]] = {}
    launches: list[Launch] = []
    includes: list[str] = []
    constants: dict[str, Node] = {}
    accessors: set[str] = set()
    left_out: list[LeftOut] = []
    qualifier_macros: dict[str, str] = {}
    for node, parent, above in _top_level(tree.root_node):
        t = node.type
        deep = too_deep(node) if t in _MEASURED else None
        if deep is not None:
            left_out.append(LeftOut(node, _function(node, parent) if t == "function_definition" else None, deep))
            continue
        if t == "function_definition":
            if _ALIGN_MISPARSE.match(source, node.start_byte) and _aligned_struct(node, types):
                continue
            f = _function(node, parent, above, source)
            if f is not None and f.name:
                functions.setdefault(f.name, []).append(f)
                if not f.is_kernel and source.find(b"<<<", node.start_byte, node.end_byte) >= 0:
                    launches.extend(_launches(node, source))
        elif t == "preproc_def" or t == "preproc_function_def":
            name = ts.text(node.child_by_field_name("name"))
            value = node.child_by_field_name("value")
            params_node = node.child_by_field_name("parameters")
            params = tuple(ts.text(p) for p in params_node.named_children) if params_node is not None else None
            macros[name] = Macro(name, params, without_comments(ts.text(value)) if value is not None else "")
            if params is None and _QUALIFIERS.search(macros[name].body):
                qualifier_macros.setdefault(name, macros[name].body)
        elif t == "preproc_include":
            path = node.child_by_field_name("path")
            if path is not None:
                includes.append(ts.text(path).strip('"<>'))
        elif t in ("struct_specifier", "type_definition", "declaration", "alias_declaration"):
            _struct_or_constant(node, types, constants, accessors)
    types.constant_text = partial(_constant_text, macros, constants)
    if types.branches:
        types.select_branches(_object_macros(macros))
    _mark_macro_qualified(functions, qualifier_macros)
    return Unit(tree, source, macros, types, functions, launches, includes, constants, accessors, left_out,
                qualifier_macros)


_QUALIFIERS = re.compile(r"\b__(?:global|device)__\b")
_HEAD_WORD = re.compile(r"[A-Za-z_]\w*")


def _mark_macro_qualified(functions: dict[str, list[Function]], qualifier_macros: dict[str, str]) -> None:
    """Functions whose head spells `__global__`/`__device__` through a macro (`CUML_KERNEL void k(...)`,
    `DI float f(...)`, which tree-sitter reads as a return type named CUML_KERNEL): kernels and device helpers
    like those written out. A header's functions keep their kind in the file that includes it: its kernels are
    its own (checked where the header is), its helpers may become device helpers."""
    if not qualifier_macros:
        return
    for fs in functions.values():
        for f in fs:
            if f.is_kernel or f.is_device:
                continue
            head = [ts.text(c) for c in f.node.children if c.end_byte <= f.declarator.start_byte]
            spelled = " ".join(qualifier_macros[w] for part in head for w in _HEAD_WORD.findall(part)
                               if w in qualifier_macros)
            if spelled:
                f.is_device = "__device__" in spelled
                f.is_kernel = "__global__" in spelled and not f.from_header


def _object_macros(macros: dict[str, Macro]) -> dict[str, str]:
    """Name → body of the object-like macros (what an `#if` reads)."""
    return {name: m.body for name, m in macros.items() if m.params is None}


def _constant_text(macros: dict[str, Macro], constants: dict[str, Node], name: str) -> str:
    macro = macros.get(name)
    if macro is not None and macro.params is None:
        return macro.body
    return ts.text(constants[name]) if name in constants else ""


def _struct_or_constant(node: Node, types: TypeTable, constants: dict[str, Node], accessors: set[str]) -> None:
    if node.type == "alias_declaration":  # using floatX = float;
        name, target = node.child_by_field_name("name"), node.child_by_field_name("type")
        if name is not None and target is not None:
            _alias(types, node, ts.text(name), ts.text(target))
        return
    spec = node if node.type == "struct_specifier" else node.child_by_field_name("type")
    if spec is not None and spec.type == "struct_specifier":
        body = spec.child_by_field_name("body")
        name_node = spec.child_by_field_name("name")
        if node.type == "type_definition":
            name_node = node.child_by_field_name("declarator") or name_node
        if body is not None and name_node is not None:
            params = _template_params(spec)
            types.definitions[ts.text(name_node)] = replace(_struct_def(body, _alignment(spec), params),
                                                            param_kinds=tuple(k for k, _ in template_parameters(spec)))
            if b"extern __shared__" in body.text:
                accessors.add(ts.text(name_node))
        return
    if node.type == "type_definition" and spec is not None:  # typedef float real; typedef Packed128<float> f128;
        for d in node.children_by_field_name("declarator"):
            if d.type == "type_identifier":
                _alias(types, node, ts.text(d), ts.text(spec))
        return
    if node.type == "declaration":
        constants.update(_file_constants(node))


def _alias(types: TypeTable, node: Node, name: str, target: str) -> None:
    """A typedef: the last of `#if` / `#else` ones wins, as the last macro does, until the macros select one
    (build_unit, Unit.include)."""
    types.aliases[name] = target
    conditions = branch_conditions(node)
    if conditions:
        types.branches.setdefault(name, []).append((conditions, target))


# Where a host function's launches are, by its text: (start, end) of each call, from the function's start, and
# the kernel it names.
_LAUNCH_SITES_LIMIT = 4096
_launch_sites: dict[bytes, tuple[tuple[int, int, str], ...]] = {}


def _launches(host: Node, source: bytes) -> list[Launch]:
    """The launches in a host function: found by the query once per text of it, then by where they are."""
    key = source[host.start_byte:host.end_byte]
    sites = _launch_sites.get(key)
    calls = _calls_at(host, sites) if sites is not None else None
    if calls is None:
        found = [c["launch"][0] for _, c in ts.matches("cuda", "cuda_launches", host)]
        calls = [(call, callee(call.child_by_field_name("function"))[1]) for call in found]
        remember(_launch_sites, key, tuple((call.start_byte - host.start_byte, call.end_byte - host.start_byte, name)
                                           for call, name in calls), _LAUNCH_SITES_LIMIT)
    out = []
    for call, name in calls:
        target = _kernel_variable(host, key, call, name)
        out.append(Launch(kernel=callee(target)[1] if target is not None else name, node=call, host_function=host,
                          named_by=target))
    return out


_ASSIGNED_TEMPLATE = re.compile(rb"\b([A-Za-z_]\w*)\s*=\s*&?\s*[\w:]+\s*<")
_assignments: dict[bytes, frozenset[str]] = {}


def _template_assignments(text: bytes) -> frozenset[str]:
    """The names a host function's text assigns a template's instance to (`kernel = &k<…>`), once per text: a
    pattern compiled per launch's name thrashed `re`'s cache on a file of a thousand kernels (54 → 102 ms an
    edit on 20,000 lines)."""
    names = _assignments.get(text)
    if names is None:
        names = frozenset(m.group(1).decode() for m in _ASSIGNED_TEMPLATE.finditer(text))
        remember(_assignments, text, names, _LAUNCH_SITES_LIMIT)
    return names


def _kernel_variable(host: Node, text: bytes, call: Node, name: str) -> Node | None:
    """The kernel a launch through a variable calls: `auto kernel = &k<Ktraits>; kernel<<<…>>>(…)` (mamba's
    and causal-conv1d's launches) gives `k<Ktraits>`, from the declaration or assignment the call sees; None
    when the launch names its kernel (the text is searched first: most launches do) or the text does not fix
    which kernel the variable holds (one assigned in a branch)."""
    if name not in _template_assignments(text):
        return None
    function = call.child_by_field_name("function")
    value = assigned(function, host, {}) if function is not None and function.type == "identifier" else None
    if value is not None and value.type == "pointer_expression" and value.named_children:
        value = value.named_children[-1]
    return value if value is not None and value.type in ("template_function", "qualified_identifier") else None


def _calls_at(host: Node, sites: tuple[tuple[int, int, str], ...]) -> list[tuple[Node, str]] | None:
    """The launch calls at `sites`, with the kernels they name; None when one is not there as the query found
    it."""
    out = []
    for start, end, name in sites:
        call = host.descendant_for_byte_range(host.start_byte + start, host.start_byte + end)
        if call is None or call.type != "call_expression" or call.end_byte - call.start_byte != end - start:
            return None
        out.append((call, name))
    return out


def callee(func: Node | None) -> tuple[str | None, str, list[Node]]:
    """(namespace or class it is qualified with, name, template arguments) of a called function:
    `cg::tiled_partition<32>` → ("cg", "tiled_partition", [32]), `__syncthreads` → (None, "__syncthreads", [])."""
    scope = None
    while func is not None and func.type == "qualified_identifier":
        scope_node = func.child_by_field_name("scope")
        scope = ts.text(scope_node) if scope_node is not None else scope
        func = func.child_by_field_name("name")
    targs: list[Node] = []
    if func is not None and func.type == "template_function":
        args = func.child_by_field_name("arguments")
        targs = ts.arguments(args)
        func = func.child_by_field_name("name")
    return scope, ts.text(func).split("::")[-1] if func is not None else "", targs


_CONST_DECL = re.compile(r"\b(const|constexpr)\b")


def _file_constants(decl: Node) -> dict[str, Node]:
    """`const int N = 1024;` and `constexpr` values at file scope (used like macros)."""
    out: dict[str, Node] = {}
    if decl.type == "declaration" and _CONST_DECL.search(ts.text(decl).split("=")[0]):
        for d in decl.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                name, _ = _declarator_name(d.child_by_field_name("declarator"))
                value = d.child_by_field_name("value")
                if name and value is not None:
                    out[name] = value
    return out


_COMMENT_OR_LITERAL = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)


def without_comments(text: str) -> str:
    """A macro's body without its comments (`#define TEX_MODE_NEAREST 0   // Nearest on base level.` is `0`):
    the preprocessor drops them before it substitutes the body, and a `//` left in ended the expression the body
    was parsed as, so the macro had no value. String and character literals are kept as written."""
    return _COMMENT_OR_LITERAL.sub(lambda m: " " if m.group().startswith("/") else m.group(), text).strip()


@lru_cache(maxsize=4096)
def parse_expression(text: str) -> Node | None:
    """A C expression (a macro body, an expansion) parsed on its own; None when it is not one."""
    tree = ts.parse_cuda(f"auto __cudalens_expr = ({text});".encode())
    decl = tree.root_node.named_children[0] if tree.root_node.named_children else None
    if decl is None or tree.root_node.has_error:
        return None
    init = decl.child_by_field_name("declarator")
    value = init.child_by_field_name("value") if init is not None else None
    return value
