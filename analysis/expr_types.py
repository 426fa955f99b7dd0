"""The C++ arithmetic type of kernel expressions, as far as the declarations say: `float`, `double`, `int`
(any integer type), `half`, or unknown (None) — enough to tell where a double literal promotes float math to
FP64 and where a division is an integer one. Template-typed and `auto` values stay unknown."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.syntax import enclosing_function, find
from cudalens.analysis.types import normalize
from cudalens.analysis.unit import Function, Unit, parse_expression

Node = ts.Node
FLOAT, DOUBLE, INT, HALF = "float", "double", "int", "half"

_INT_NAMES = {"int", "unsigned", "unsigned int", "signed", "long", "unsigned long", "long long",
              "unsigned long long", "short", "unsigned short", "char", "signed char", "unsigned char", "bool",
              "size_t", "ptrdiff_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
              "uint64_t", "long int", "unsigned long int", "uint", "int64", "index_t", "dim3"}
_SCALARS = {"float": FLOAT, "double": DOUBLE, "long double": DOUBLE, "half": HALF, "__half": HALF,
            "__nv_bfloat16": HALF, "nv_bfloat16": HALF}
_VECTOR = re.compile(r"^(float|double|int|uint|long|ulong|longlong|ulonglong|short|ushort|char|uchar)([1-4])$")
_DECIMAL_FLOAT = re.compile(r"^(?:\d[\d']*\.[\d']*|\.\d[\d']*|\d[\d']*)(?:[eE][+-]?\d+)?([fFlL]?)$")
_HEX_FLOAT = re.compile(r"^0[xX][0-9a-fA-F']*\.?[0-9a-fA-F']*[pP][+-]?\d+([fFlL]?)$")
# Math functions whose float overload CUDA picks for float arguments (`sqrt(float)` is float) but whose
# double overload any double argument selects.
MATH_OVERLOADED = {
    "sqrt", "rsqrt", "cbrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
    "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "pow", "fabs",
    "floor", "ceil", "round", "trunc", "rint", "fmod", "fmax", "fmin", "fma", "hypot", "erf", "erfc", "lgamma",
    "tgamma", "copysign", "max", "min", "abs", "remainder", "nearbyint", "ldexp", "sinpi", "cospi",
}
_FLOAT_RESULT = re.compile(r"^__f(add|sub|mul|div|rcp|sqrt|fma)_r[nzdu]$|^__fdividef$|^__saturatef$|"
                           r"^__(half|bfloat16|int|uint|ll|ull)2float(_r[nzdu])?$|^__(exp|exp10|log|log2|log10|sin|"
                           r"cos|tan|pow)f$|^(normcdf|normcdfinv|erfinv|erfcinv|rcbrt|sincos|sinpi|cospi)f$")


def float_function(name: str) -> bool:
    """`expf`, `sqrtf`, `__expf`, `__fdividef`...: functions that take and return float."""
    return (name.endswith("f") and name[:-1] in MATH_OVERLOADED) or bool(_FLOAT_RESULT.match(name))
_CASTS = {"static_cast", "reinterpret_cast", "const_cast"}
_FLOAT_CONSTRUCTOR = re.compile(r"^make_float[1-4]$")  # CUDA's vector_functions.h: every parameter a float


@dataclass(frozen=True)
class CType:
    name: str  # normalized type name ("float", "float4", "MyStruct") or a scalar kind
    pointers: int = 0  # levels of pointer or array
    constant: bool = False  # folded at compile time (literals, macros of literals)
    literal_double: bool = False  # a double literal, as written

    @property
    def kind(self) -> str | None:
        if self.pointers:
            return None
        if self.name in _SCALARS:
            return _SCALARS[self.name]
        if self.name in _INT_NAMES:
            return INT
        return None


def literal_kind(text: str) -> str | None:
    """FLOAT for `1.0f`, DOUBLE for `1.0`, `1e-3`, `0x1p-2`, INT for integers; None for other literals."""
    t = text.strip()
    decimal = _DECIMAL_FLOAT.match(t)
    m = decimal if decimal and ("." in t or "e" in t.lower()) else _HEX_FLOAT.match(t)
    if m:
        return FLOAT if m.group(1).lower() == "f" else DOUBLE
    if re.match(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)[uUlL]*$", t):
        return INT
    return None


def _declarator(node: Node | None) -> tuple[str, int]:
    """The name a declarator declares, and its pointer/array levels."""
    levels = 0
    while node is not None and node.type not in ("identifier", "field_identifier"):
        if node.type in ("pointer_declarator", "array_declarator"):
            levels += 1
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in node.named_children if c.type in ("identifier", "field_identifier")), None)
        node = nxt
    return (ts.text(node) if node is not None else ""), levels


class ExprTyper:
    """Types of expressions inside one function, from its parameters and local declarations. A name declared
    with different types in different scopes is unknown."""

    def __init__(self, unit: Unit, function: Function) -> None:
        self.unit = unit
        self.template_params = set(function.template_params)
        self.names: dict[str, CType | None] = {}
        for p in function.params:
            self._declare(p.node)
        for node in find(function.body, "declaration"):
            self._declare(node)

    def _declare(self, decl: Node) -> None:
        type_node = decl.child_by_field_name("type")
        if type_node is None:
            return
        base = normalize(ts.text(type_node))
        declarators = decl.children_by_field_name("declarator")
        qualifiers = {ts.text(c) for c in decl.children if c.type in ("type_qualifier", "storage_class_specifier")}
        folded = bool(qualifiers & {"const", "constexpr"})
        for d in declarators:
            name, levels = _declarator(d.child_by_field_name("declarator") if d.type == "init_declarator" else d)
            if not name:
                continue
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            # `constexpr int WARPS = BLOCK / 32;`, `const int w = sizeof(float4) / 4;`: the compiler folds them; a
            # `constexpr` one always (C++ requires a constant expression: `KTraits::NUM_MMA_D / 2` too)
            constant = levels == 0 and ("constexpr" in qualifiers or (folded and self.folds(value)))
            t = CType(base, levels, constant=constant)
            if name in self.names and self.names[name] != t:
                self.names[name] = None
            else:
                self.names[name] = t

    def folds(self, node: Node | None, depth: int = 0) -> bool:
        """Whether an expression is a compile-time constant: literals, `sizeof`, template parameters, macros,
        file-scope constants and the `const`/`constexpr` locals made of them."""
        if node is None or depth > 40:
            return False
        t = node.type
        if t in ("number_literal", "true", "false", "char_literal", "sizeof_expression"):
            return True
        if t == "identifier":
            name = ts.text(node)
            if name in self.names:
                known = self.names[name]
                return known is not None and known.constant
            return name in self.template_params or name == "warpSize" or name in self.unit.constants or (
                name in self.unit.macros and self.unit.macros[name].params is None)
        if t == "qualified_identifier":  # x128::size
            return self.unit.types.lookup(ts.text(node.child_by_field_name("scope") or node)) is not None
        if t in ("binary_expression", "unary_expression", "parenthesized_expression", "conditional_expression",
                 "cast_expression"):
            parts = [c for c in node.named_children if c.type != "type_descriptor"]
            return bool(parts) and all(self.folds(c, depth + 1) for c in parts)
        return False

    def type_of(self, node: Node | None, literals_as_float: bool = False, depth: int = 0) -> CType | None:
        """The expression's type; with `literals_as_float`, as if every double literal had its `f`."""
        if node is None or depth > 40:
            return None

        def sub(n: Node | None) -> CType | None:
            return self.type_of(n, literals_as_float, depth + 1)

        t = node.type
        if t == "number_literal":
            kind = literal_kind(ts.text(node))
            if kind == DOUBLE:
                return CType(FLOAT if literals_as_float else DOUBLE, constant=True, literal_double=True)
            return CType(kind, constant=True) if kind else None
        if t in ("true", "false", "char_literal"):
            return CType(INT, constant=True)
        if t in ("parenthesized_expression", "condition_clause") and node.named_children:
            return sub(node.named_children[-1])
        if t == "identifier":
            return self._identifier(ts.text(node), literals_as_float, depth)
        if t == "field_expression":
            return self._field(node, sub)
        if t == "subscript_expression":
            base = sub(node.child_by_field_name("argument"))
            return CType(base.name, base.pointers - 1) if base is not None and base.pointers > 0 else None
        if t == "pointer_expression":
            arg = sub(node.child_by_field_name("argument"))
            op = ts.text(node.child_by_field_name("operator") or node)
            if arg is None:
                return None
            if op == "&":
                return CType(arg.name, arg.pointers + 1)
            return CType(arg.name, arg.pointers - 1) if arg.pointers > 0 else None
        if t == "cast_expression":
            type_node = node.child_by_field_name("type")
            return _named_type(ts.text(type_node)) if type_node is not None else None
        if t == "call_expression":
            return self._call(node, sub)
        if t == "binary_expression":
            op = ts.text(node.child_by_field_name("operator"))
            left, right = sub(node.child_by_field_name("left")), sub(node.child_by_field_name("right"))
            if op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
                return CType(INT, constant=bool(left and right and left.constant and right.constant))
            if op in ("<<", ">>", "&", "|", "^"):
                return CType(INT, constant=bool(left and right and left.constant and right.constant)) \
                    if left is not None and left.kind == INT else None
            return promote(left, right)
        if t == "unary_expression":
            op = ts.text(node.child_by_field_name("operator"))
            arg = sub(node.child_by_field_name("argument"))
            if op == "!":
                return CType(INT, constant=bool(arg and arg.constant))
            return arg
        if t in ("update_expression",):
            return sub(node.child_by_field_name("argument"))
        if t == "assignment_expression":
            return sub(node.child_by_field_name("left"))
        if t == "conditional_expression":
            return promote(sub(node.child_by_field_name("consequence")),
                           sub(node.child_by_field_name("alternative")))
        if t == "sizeof_expression":
            return CType("size_t", constant=True)
        return None

    def converted_to_float(self, node: Node) -> bool:
        """Whether the value of `node` is converted to float at once, before anything else uses it: it
        initialises or is assigned to a float, is cast to float (`(float)x`, `float(x)`, `static_cast<float>`),
        is returned by a float function, or is passed for a `float` parameter — of a float intrinsic (`expf`),
        of CUDA's `make_float2/3/4`, or of a function or overloaded operator the unit defines (helper_math's
        `operator*=(float3 &, float)` under `v *= …`). nvcc then narrows one float⊗double operation back to
        float (`fptrunc(fpext(x) / 2.0)` is `x / 2.0f` when the literal is exact). A compound assignment to a
        float scalar is not one: `f *= 1.0 / s` multiplies in double, the division's result never stands alone."""
        while node.parent is not None and node.parent.type == "parenthesized_expression":
            node = node.parent
        parent = node.parent
        if parent is None:
            return False
        kind = parent.type
        if kind == "init_declarator" and parent.child_by_field_name("value") == node:
            decl = parent.parent
            type_node = decl.child_by_field_name("type") if decl is not None else None
            target = parent.child_by_field_name("declarator")
            return type_node is not None and ts.text(type_node) == "float" and target is not None \
                and target.type == "identifier"
        if kind == "assignment_expression" and parent.child_by_field_name("right") == node:
            op, left = ts.text(parent.child_by_field_name("operator")), parent.child_by_field_name("left")
            if op == "=":
                target = self.type_of(left)
                return target is not None and target.kind == FLOAT
            return self._float_parameter(f"operator{op}", [left, node], 1)
        if kind == "binary_expression":  # `v * (1.0 / s)` for a float3 `v`: helper_math's operator*(float3, float)
            left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
            op = ts.text(parent.child_by_field_name("operator"))
            return self._float_parameter(f"operator{op}", [left, right], 0 if left == node else 1)
        if kind == "cast_expression":
            return normalize(ts.text(parent.child_by_field_name("type"))) == "float"
        if kind == "return_statement":
            function = enclosing_function(parent)
            type_node = function.child_by_field_name("type") if function is not None else None
            return type_node is not None and ts.text(type_node) == "float"
        call = parent.parent
        if kind != "argument_list" or call is None or call.type != "call_expression":
            return False
        func = call.child_by_field_name("function")
        if func is None:
            return False
        if func.type == "primitive_type":  # float(x)
            return ts.text(func) == "float"
        if func.type == "template_function":  # static_cast<float>(x)
            targs = func.child_by_field_name("arguments")
            return ts.text(func.child_by_field_name("name")) in _CASTS and targs is not None \
                and [normalize(ts.text(a)) for a in targs.named_children] == ["float"]
        name = ts.text(func).split("::")[-1]
        if float_function(name) or _FLOAT_CONSTRUCTOR.match(name):
            return True
        args = [a for a in parent.named_children if a.type != "comment"]
        return self._float_parameter(name, args, args.index(node))

    def _float_parameter(self, name: str, args: list[Node], index: int) -> bool:
        """Whether a call of `name` with `args` passes `args[index]` (a float⊗double value) for a `float`
        parameter: every overload the unit defines with that many parameters, and for an operator the other
        operands' types, takes `float` there (or a CUDA vector type, which a scalar cannot become); none takes
        another scalar or an unknown type."""
        operator = name.startswith("operator")
        others = [] if not operator else [self.type_of(a) for a in args]
        if operator and any(t is None or (t.kind is not None and i != index) for i, t in enumerate(others)):
            return False  # a built-in operator on scalars (or an operand of unknown type): no overload chosen
        found = False
        for function in self.unit.functions.get(name, []):
            params = function.params
            if not function.is_device or len(params) < len(args) or any(
                    p.node.type != "optional_parameter_declaration" for p in params[len(args):]):
                continue
            if operator and any(normalize(params[i].type_text) != others[i].name or params[i].pointer
                                for i in range(len(args)) if i != index):
                continue
            param = params[index]
            declared = normalize(param.type_text)
            if declared == "float" and not param.pointer and not param.reference:
                found = True
            elif param.pointer or not _VECTOR.match(declared):
                return False
        return found

    def _identifier(self, name: str, literals_as_float: bool, depth: int) -> CType | None:
        if name in self.names:
            return self.names[name]
        if name in self.template_params:
            return None  # a type or a value chosen per instantiation
        if name == "warpSize":
            return CType(INT, constant=True)  # 32 on every GPU; ptxas folds it
        macro = self.unit.macros.get(name)
        if macro is not None and macro.params is None and macro.body:
            return self.type_of(parse_expression(macro.body), literals_as_float, depth + 1)
        if name in self.unit.constants:
            value = self.type_of(self.unit.constants[name], literals_as_float, depth + 1)
            return CType(value.name, value.pointers, True) if value is not None else None
        return None

    def _field(self, node: Node, sub) -> CType | None:
        arg = node.child_by_field_name("argument")
        field = ts.text(node.child_by_field_name("field"))
        if arg is not None and ts.text(arg) in ("threadIdx", "blockIdx", "blockDim", "gridDim") \
                and ts.text(arg) not in self.names:
            return CType("unsigned int")
        base = sub(arg)
        if base is None:
            return None
        arrow = any(ts.text(c) == "->" for c in node.children if not c.is_named)
        if base.pointers != (1 if arrow else 0):
            return None
        m = _VECTOR.match(base.name)
        if m and field in "xyzw":
            return CType(m.group(1) if m.group(1) in ("float", "double") else INT)
        info = self.unit.types.lookup(base.name)
        found = info.field(field) if info is not None else None
        return CType(found[1].name) if found is not None else None

    def _call(self, node: Node, sub) -> CType | None:
        func = node.child_by_field_name("function")
        if func is None:
            return None
        args_node = node.child_by_field_name("arguments")
        args = ts.arguments(args_node)
        if func.type == "template_function":
            name = ts.text(func.child_by_field_name("name"))
            targs = func.child_by_field_name("arguments")
            if name in _CASTS and targs is not None and targs.named_children:
                return _named_type(ts.text(targs.named_children[0]))
            return None
        name = ts.text(func).split("::")[-1]
        if name in MATH_OVERLOADED:
            types = [sub(a) for a in args]
            if name == "pow" and len(types) == 2 and types[0] is not None and types[0].kind == FLOAT \
                    and types[1] is not None and types[1].kind == INT:
                return CType(DOUBLE)  # CUDA has no pow(float, int): std::pow promotes to double
            out = None
            for arg_type in types:
                if arg_type is None or arg_type.kind not in (FLOAT, DOUBLE, INT):
                    return None
                out = promote(out, arg_type) if out is not None else arg_type
            if out is not None and out.kind == INT and name not in ("max", "min", "abs"):
                return CType(DOUBLE)
            return CType(out.name) if out is not None else None
        if float_function(name):
            return CType(FLOAT)
        return None


def _named_type(text: str) -> CType | None:
    name = normalize(text)
    levels = text.count("*")
    return CType(name, levels) if name else None


def promote(a: CType | None, b: CType | None) -> CType | None:
    """The usual arithmetic conversions over our kinds; unknown when either side is unknown."""
    if a is None or b is None:
        return None
    if a.pointers or b.pointers:
        return None
    ka, kb = a.kind, b.kind
    if ka is None or kb is None:
        return None
    constant = a.constant and b.constant
    for kind in (DOUBLE, FLOAT):
        if kind in (ka, kb):
            return CType(kind, constant=constant)
    if HALF in (ka, kb):
        return None  # __half arithmetic goes through overloaded operators: not ours to judge
    return CType(INT, constant=constant)


def exact_in_float(literal: str) -> bool:
    """Whether a double literal's value is a float too (0.5, 2.0, 1024.0; not 0.1)."""
    try:
        value = float(literal.rstrip("fFlL").replace("'", "")) if not literal.lower().startswith("0x") \
            else float.fromhex(literal.rstrip("fFlL").replace("'", ""))
        return struct.unpack("f", struct.pack("f", value))[0] == value
    except (ValueError, OverflowError):
        return False
