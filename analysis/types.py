"""Element sizes of the types kernels use, and the layout of structs (array-of-structs reads, custom vector types
such as llm.c's `Packed128<T>`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

from cudalens.analysis import python_ast
from cudalens.analysis.conditions import chosen

# bytes, and alignment where it differs from the size
PRIMITIVE_SIZES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "at::Half": 2, "c10::Half": 2, "at::BFloat16": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4, "int32_t": 4, "uint32_t": 4, "half2": 4,
    "__half2": 4, "__nv_bfloat162": 4, "char4": 4, "uchar4": 4, "short2": 4, "ushort2": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "double": 8, "size_t": 8,
    "int64_t": 8, "uint64_t": 8, "float2": 8, "int2": 8, "uint2": 8, "short4": 8, "ushort4": 8,
    "long2": 16, "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "longlong2": 16,
    "float3": 12, "int3": 12, "uint3": 12, "double4": 32,
}
_ALIGN = {"float3": 4, "int3": 4, "uint3": 4, "double4": 16}
FLOAT_TYPES = {"float", "double", "half", "__half", "__nv_bfloat16", "nv_bfloat16", "float2", "float4",
               "double2", "half2", "__half2", "scalar_t", "float3"}


@dataclass(frozen=True)
class TypeInfo:
    name: str
    size: int
    align: int
    fields: tuple[tuple[str, int, TypeInfo], ...] = ()  # (name, byte offset, type) for structs
    statics: tuple[tuple[str, int], ...] = ()  # `static constexpr int size = ...;` members, where constant

    def static(self, name: str) -> int | None:
        return next((v for n, v in self.statics if n == name), None)

    @property
    def is_struct(self) -> bool:
        return bool(self.fields)

    def field(self, name: str) -> tuple[int, TypeInfo] | None:
        for fname, offset, ftype in self.fields:
            if fname == name:
                return offset, ftype
        return None


_VECTOR_FIELDS = {"x": 0, "y": 1, "z": 2, "w": 3}


@lru_cache(maxsize=4096)
def normalize(type_text: str) -> str:
    text = re.sub(r"\s*([<>,])\s*", r"\1", type_text) if "<" in type_text else type_text  # `X< float >`
    words = [w for w in text.replace("*", " ").replace("&", " ").split()
             if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "static",
                          "__shared__", "extern", "__constant__", "__device__", "register", "typename")]
    return " ".join(words)


@dataclass(frozen=True)
class StructDef:
    """A struct as written: members with their type and element-count text (`ElementType payload[size]`), its
    `static constexpr` members, the alignment it asks for, and for a template its parameters."""

    members: tuple[tuple[str, str, str], ...]  # (field, type text, count text: "" for a scalar member)
    statics: tuple[tuple[str, str], ...] = ()  # (name, initializer text)
    align: int = 1  # alignas(N) / __align__(N)
    params: tuple[str, ...] = ()
    # member types, `using input_t = input_t_;` (a traits struct's: mamba's `Ktraits::input_t`)
    aliases: tuple[tuple[str, str], ...] = ()
    param_kinds: tuple[str, ...] = ()  # for each of `params`: "type", "bool" or "value"


_TEMPLATE = re.compile(r"^([\w:]+)<(.*)>$")
_MEMBER_OF = re.compile(r"^([\w:]+)\s*<(.*)>\s*::\s*(\w+)$")
_SIZEOF = re.compile(r"sizeof\s*\(\s*([^()]+?)\s*\)")


class TypeTable:
    """Known types of one translation unit: primitives, CUDA vector types, the unit's structs and typedefs, and
    instantiations of its struct templates (llm.c's `Packed128<float>`). Layouts are computed when first asked
    for, so a struct may use a type, macro or constant defined after it."""

    def __init__(self) -> None:
        self.definitions: dict[str, StructDef] = {}
        self.aliases: dict[str, str] = {}
        # typedefs inside `#if` branches, in order: (what the branch needs, the target); `aliases` holds the
        # last one, or the one the macros select (conditions.chosen)
        self.branches: dict[str, list[tuple[tuple[tuple[str, bool], ...], str]]] = {}
        # The text of an object-like macro or file-scope constant of the unit ("" when none). A function of the
        # unit's dicts, not a method of the unit: a unit holding its table holding the unit was a reference
        # cycle, and every edit's unit (with its parse tree) waited for the cyclic collector to be freed.
        self.constant_text: Callable[[str], str] = lambda name: ""
        self._layouts: dict[str, TypeInfo | None] = {}
        self._instances: dict[str, tuple[StructDef, dict[str, str]] | None] = {}
        self._evaluating: set[str] = set()

    def key(self) -> str:
        """Changes whenever a struct or typedef does."""
        return repr((sorted(self.definitions.items()), sorted(self.aliases.items())))

    def merge(self, other: TypeTable, macros: Mapping[str, str] | None = None) -> None:
        """Add another table's structs and typedefs (a header's); this table's own win. A typedef the header
        makes in `#if` branches takes the branch `macros` (the includer's and the header's) select."""
        for name, d in other.definitions.items():
            self.definitions.setdefault(name, d)
        for name, target in other.aliases.items():
            if name not in self.aliases:
                branches = other.branches.get(name)
                self.aliases[name] = (chosen(branches, macros) if branches and macros is not None else None) \
                    or target
        self._layouts.clear()
        self._instances.clear()

    def select_branches(self, macros: Mapping[str, str]) -> None:
        """Each `#if`-chosen typedef as `macros` select it (the last branch's where they cannot tell)."""
        for name, branches in self.branches.items():
            self.aliases[name] = chosen(branches, macros) or self.aliases[name]
        self._layouts.clear()
        self._instances.clear()

    def lookup(self, type_text: str) -> TypeInfo | None:
        return self._lookup(normalize(type_text), 0)

    def _lookup(self, name: str, depth: int) -> TypeInfo | None:
        if depth > 8:
            return None
        if name in self.aliases:
            return self._lookup(normalize(self.aliases[name]), depth + 1)
        if name in PRIMITIVE_SIZES:
            return _primitive(name)
        member = self.member_type(name, depth)
        if member is not None:
            return self._lookup(member, depth + 1)
        if name.startswith("unsigned ") or name.startswith("signed "):
            return self._lookup(name.split(" ", 1)[1] or "int", depth + 1)
        if name not in self._layouts:
            self._layouts[name] = None  # a struct that contains itself stays unknown
            self._layouts[name] = self._layout(name, depth)
        return self._layouts[name]

    def _instance(self, name: str, depth: int) -> tuple[StructDef, dict[str, str]] | None:
        """The struct `name` spells (`Traits<128,float>`) and the text each of its template parameters and
        member types stands for in it (made once per name: a kernel asks for its traits' members at every
        declaration)."""
        if name not in self._instances:
            self._instances[name] = None  # a struct whose members name itself stays unknown
            self._instances[name] = self._make_instance(name, depth)
        return self._instances[name]

    def _make_instance(self, name: str, depth: int) -> tuple[StructDef, dict[str, str]] | None:
        m = _TEMPLATE.match(name)
        base, args = (m.group(1), _split_args(m.group(2))) if m else (name, [])
        args = [self._resolved(a, depth) for a in args]
        special = self.definitions.get(f"{base}<{','.join(args)}>") if m else None  # `template<> struct X<16>`
        d = special or self.definitions.get(base) or self.definitions.get(base.split("::")[-1])
        if d is None or (len(args) != len(d.params) and special is None):
            return None
        binding = dict(zip(d.params, args, strict=True)) if special is None else {}
        for _ in range(2):  # member types and constants may name each other (`BytesToType<kNBytes * kNElts>`)
            for alias, target in d.aliases:  # in order: a member type may name an earlier one
                binding[alias] = self._resolved(substitute(target, binding), depth)
            for sname, expr in d.statics:
                value = self.constant(substitute(expr, binding))
                if value is not None:
                    binding[sname] = str(value)
        return d, binding

    def open_arguments(self, type_text: str) -> list[tuple[str, str]]:
        """The arguments of a struct template instance that are names this table cannot resolve, with the kind
        of parameter each stands for ("type", "bool", "value"): `input_t` and `kIsVecLoad` of
        `Traits<128, 2, kIsVecLoad, input_t>` written in a host template whose own arguments are not known."""
        m = _TEMPLATE.match(normalize(type_text))
        d = self.definitions.get(m.group(1)) or self.definitions.get(m.group(1).split("::")[-1]) if m else None
        if d is None or m is None:
            return []
        args = _split_args(m.group(2))
        out = []
        for arg, kind in zip(args, d.param_kinds, strict=False):
            if not re.fullmatch(r"[A-Za-z_]\w*", arg) or arg in ("true", "false"):
                continue
            known = self.lookup(arg) is not None if kind == "type" else self.named_constant(arg) is not None
            if not known and (arg, kind) not in out:
                out.append((arg, kind))
        return out

    def member_type(self, name: str, depth: int = 0) -> str | None:
        """What a member type of a struct instance spells: `Traits<128,float>::input_t` → `float`; None when
        `name` is not one or the struct does not define it."""
        owner, sep, member = name.rpartition("::")
        if not sep or not owner.endswith(">") or "<" in member:
            return None
        found = self._instance(owner, depth)
        if found is None or member not in dict(found[0].aliases):
            return None
        return found[1][member]

    def _layout(self, name: str, depth: int) -> TypeInfo | None:
        found = self._instance(name, depth)
        if found is None:
            return None
        d, binding = found
        statics = {sname: int(binding[sname]) for sname, _ in d.statics if binding.get(sname, "").lstrip("-").isdigit()}
        offset, align, fields = 0, d.align, []
        for fname, ftype_text, count_text in d.members:
            ftype = self._lookup(normalize(substitute(ftype_text, binding)), depth + 1)
            count = self.constant(substitute(count_text, binding), statics) if count_text else 1
            if ftype is None or count is None or count <= 0:
                return None  # a member of unknown size: the layout cannot be trusted
            offset = -(-offset // ftype.align) * ftype.align
            fields.append((fname, offset, ftype))
            offset += ftype.size * count
            align = max(align, ftype.align)
        if not fields:
            # a traits struct (`static constexpr int kNThreads = kNThreads_;`, member types and no data): an
            # empty class, one byte, whose constants kernels read as `Ktraits::kNThreads`
            return TypeInfo(name, 1, 1, (), tuple(sorted(statics.items()))) if statics and not d.members \
                else None
        size = -(-offset // align) * align
        return TypeInfo(name, size, align, tuple(fields), tuple(sorted(statics.items())))

    def _resolved(self, type_text: str, depth: int) -> str:
        """A template argument with typedefs followed (`floatX` → `float`) and arithmetic done (`4 * 4` →
        `16`), so instances compare equal."""
        text = re.sub(r"^\s*typename\s+", "", type_text.strip())
        m = _MEMBER_OF.match(text) or _TEMPLATE.match(text)
        if m is not None and re.search(r"[-+*/%]", m.group(2)):  # `BytesToType<kNBytes * kNElts>::Type`
            args = ",".join(str(v) if (v := self._arithmetic(a)) is not None else a for a in _split_args(m.group(2)))
            text = f"{m.group(1)}<{args}>" + (f"::{m.group(3)}" if m.re is _MEMBER_OF else "")
        name = normalize(text)
        while name in self.aliases and depth < 8:
            name, depth = normalize(self.aliases[name]), depth + 1
        return name

    def _arithmetic(self, text: str) -> int | None:
        return self.constant(text) if re.search(r"[-+*/%]", text) and "<" not in text else None

    def named_constant(self, name: str) -> int | None:
        """An object-like macro's or file-scope constant's integer value, as far as this table can evaluate it
        (struct layouts use this for `float v[N]`)."""
        text = self.constant_text(name)
        if not text or name in self._evaluating:
            return None  # `#define N N` and other cycles stay unknown
        self._evaluating.add(name)
        try:
            return self.constant(text)
        finally:
            self._evaluating.discard(name)

    def constant(self, expr: str, names: dict[str, int] | None = None) -> int | None:
        """An integer constant expression of a struct (`sizeof(int4) / sizeof(float)`, `N * 2`), from sizes of
        known types, `names` (the struct's static members) and the unit's macros and constants."""
        def size_of(m: re.Match) -> str:
            info = self.lookup(m.group(1))
            return str(info.size) if info is not None else "None"

        def name_of(m: re.Match) -> str:
            word = m.group(0)
            value = (names or {}).get(word)
            value = self.named_constant(word) if value is None else value
            return str(value) if value is not None else "None"

        text = _SIZEOF.sub(size_of, _python_logic(expr))
        text = re.sub(r"\b(?!(?:and|or|not|if|else)\b)[A-Za-z_]\w*\b", name_of, text)
        text = re.sub(r"(?<=\d)[uUlL]+\b", "", text)
        try:
            return _arith(python_ast.parse(text.strip(), mode="eval").body)
        except (SyntaxError, ArithmeticError, ValueError):
            return None


_TERNARY = re.compile(r"^([^?:]+)\?([^?:]+):([^?:]+)$")


def _python_logic(expr: str) -> str:
    """C's `a == 4 ? 4 : 8`, `&&`, `||`, `!`, `true`/`false` as Python's (one conditional, not nested)."""
    text = expr.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    text = re.sub(r"\btrue\b", "1", re.sub(r"\bfalse\b", "0", text))
    m = _TERNARY.match(text.strip())
    return f"({m.group(2)}) if ({m.group(1)}) else ({m.group(3)})" if m else text


_COMPARE: dict[type, Callable[[int, int], bool]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
}

_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: int(a / b), ast.Mod: lambda a, b: a - int(a / b) * b,  # C truncates toward zero
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}


def _arith(node: ast.expr) -> int | None:
    """The value of an integer expression of literals and + - * / % << >>; None for anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, int) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _arith(node.operand)
        return -v if v is not None else None
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _arith(node.left), _arith(node.right)
        return _BINOPS[type(node.op)](a, b) if a is not None and b is not None else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = _arith(node.operand)
        return int(not v) if v is not None else None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        a, b = _arith(node.left), _arith(node.comparators[0])
        return int(_COMPARE[type(node.ops[0])](a, b)) if a is not None and b is not None else None
    if isinstance(node, ast.BoolOp):
        values = [_arith(v) for v in node.values]
        if None in values:
            return None
        return int(all(values)) if isinstance(node.op, ast.And) else int(any(values))
    if isinstance(node, ast.IfExp):
        test = _arith(node.test)
        return None if test is None else _arith(node.body if test else node.orelse)
    return None


@cache
def _primitive(name: str) -> TypeInfo:
    size = PRIMITIVE_SIZES[name]
    return TypeInfo(name, size, _ALIGN.get(name, min(size, 16)), _vector_fields(name, size))


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated template arguments."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [a for a in out if a]


def substitute(text: str, binding: dict[str, str]) -> str:
    """`text` with the names of `binding` replaced (template parameters by their arguments)."""
    if not binding or not any(name in text for name in binding):
        return text
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: binding.get(m.group(0), m.group(0)), text)


def _vector_fields(name: str, size: int) -> tuple[tuple[str, int, TypeInfo], ...]:
    for base, lanes in (("float", 4), ("double", 8), ("int", 4), ("uint", 4), ("half", 2), ("__half", 2),
                        ("short", 2), ("ushort", 2), ("char", 1), ("uchar", 1), ("long", 8), ("longlong", 8),
                        ("__nv_bfloat16", 2)):
        if name.startswith(base) and name[len(base):] in ("2", "3", "4"):
            scalar = TypeInfo(base, lanes, lanes)
            return tuple((f, i * lanes, scalar) for f, i in _VECTOR_FIELDS.items() if i < int(name[-1]))
    return ()
