"""Compile-time constants, folded by our own small evaluator over the AST (the user's
module is never executed): ints, floats, bools, strings, dtypes (`T.float32`, "float16"),
tuples, arithmetic, comparisons, `T.ceildiv`, typed literals and a few pure builtins.

Folding is bounded: integers above 2**256, huge powers and shifts are refused (R102), so
a hostile `9 ** 9 ** 9` cannot hang the checker."""
from __future__ import annotations

import ast
import math
import operator
from typing import Callable

from ..dtypes import DType, RefusedDType, lookup as lookup_dtype, refused_dtype
from .errors import shape_error
from .names import Imports

MAX_INT_BITS = 256


class NotConstant(Exception):
    """The expression depends on something only known at run time (or not at all)."""

    def __init__(self, node: ast.AST, why: str):
        self.node = node
        self.why = why
        super().__init__(why)


# Python's own operator semantics: TileLang evaluates arithmetic on Python values in
# Python before TVM ever sees it, so `M / 2` is a float and `-7 // 2` is -4.
BINOPS: dict[type, Callable] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
COMPARES: dict[type, Callable] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
# `op in ("sum", "max")` on trace-time values only (never a TIR comparison)
_MEMBERSHIP: dict[type, Callable] = {
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
# pure functions of Python's math module a factory computes sizes with (hadamard's
# `int(math.log2(n))`), evaluated as Python would; bounded like the operators (a huge
# argument's result is checked where it is used)
_MATH: dict[str, Callable] = {
    f"math.{name}": getattr(math, name)
    for name in ("log2", "log", "log10", "exp", "ceil", "floor", "sqrt", "isqrt", "gcd",
                 "trunc")}

# TVM's DataType, which factories import to read a dtype's width (`DataType(dtype).bits`)
_DATA_TYPE = ("tvm.DataType", "tvm.runtime.DataType", "tvm.runtime.data_type.DataType",
              "tilelang.language.DataType")
_DTYPE_FIELDS = ("bits", "lanes")

# the Python builtins _builtin folds (a helper of the same name would shadow them in
# Python; a file that defines one is not worth the confusion: the builtin wins)
_BUILTINS = ("min", "max", "abs", "int", "float", "len")
_INTEGER_ONLY = (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, DType)


def apply_binop(op: ast.operator, a, b, node: ast.AST):
    """a op b on Python numbers, with the size guards; R102 for a constant that cannot be
    computed (division by zero, overflow)."""
    fn = BINOPS.get(type(op))
    if fn is None:
        raise NotConstant(node, f"operator {type(op).__name__}")
    if not (is_number(a) and is_number(b)):
        raise NotConstant(node, "arithmetic on a non-number")
    if isinstance(op, _INTEGER_ONLY) and (isinstance(a, float) or isinstance(b, float)):
        shape_error("bitwise operators need integer operands", node)
    if isinstance(op, (ast.LShift, ast.Pow)) and isinstance(b, int) and abs(b) > MAX_INT_BITS \
            and not (isinstance(op, ast.Pow) and abs(a) <= 1):
        shape_error("constant too large", node)
    try:
        value = fn(a, b)
    except ZeroDivisionError:
        shape_error("division by zero in a constant expression", node)
    except (OverflowError, ValueError) as exc:
        shape_error(f"cannot fold constant: {exc}", node)
    if isinstance(value, complex):
        shape_error("constant expression has no real value", node)
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        shape_error("constant too large", node)
    return value


def ceildiv(a, b, node: ast.AST):
    if not (isinstance(a, int) and isinstance(b, int)):
        shape_error("T.ceildiv needs integer operands", node)
    if b == 0:
        shape_error("division by zero in T.ceildiv", node)
    return -(-a // b)


def as_dtype(value, node: ast.AST) -> DType:
    """The dtype a folded value names: `T.float32` or a string such as "float16"."""
    if isinstance(value, DType):
        return value
    if isinstance(value, RefusedDType):
        shape_error(value.message, node)
    if isinstance(value, str):
        found = lookup_dtype(value)
        if found is not None:
            return found
        shape_error(refused_dtype(value) or f"unknown dtype {value!r}", node)
    shape_error("expected a dtype (e.g. T.float32 or \"float16\")", node)


def typed_literal(dtype: DType, value, node: ast.AST):
    """The Python value of `T.float32(1)` and friends."""
    if not is_number(value):
        raise NotConstant(node, "typed literal of a non-constant")
    if dtype.is_float:
        return float(value)
    if dtype.is_bool:
        return bool(value)
    return int(value)


class ConstFolder:
    """fold(node) -> a Python value, or NotConstant. `lookup(name, node)` gives the value
    of a constant name (module constants, factory parameters, kernel-local constants)."""

    def __init__(self, imports: Imports, lookup: Callable[[str, ast.AST], object],
                 buffer: Callable[[str], object] | None = None,
                 helper: Callable[[str], ast.FunctionDef | None] | None = None,
                 depth: int = 0):
        self.imports = imports
        self.lookup = lookup
        # the buffer a name denotes in a kernel (None elsewhere): `acc.dtype` and
        # `acc.shape` are trace-time values in TileLang
        self.buffer = buffer
        # the same file's plain function a name denotes (spec.frontend.helpers): a call
        # of it is evaluated as Python would at trace time
        self.helper = helper
        self.depth = depth

    def fold(self, node: ast.AST):
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise NotConstant(node, f"{type(node).__name__} is not a constant")
        return method(node)

    def fold_int(self, node: ast.AST, what: str) -> int:
        """A compile-time integer (shapes, extents, grid sizes): R102 otherwise."""
        try:
            value = self.fold(node)
        except NotConstant:
            shape_error(f"{what} must be a compile-time constant integer", node)
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            shape_error(f"{what} must be an integer, got {value!r}", node)
        return value

    def fold_dtype(self, node: ast.AST) -> DType:
        try:
            value = self.fold(node)
        except NotConstant:
            shape_error("dtype must be a compile-time constant", node)
        return as_dtype(value, node)

    # ------------------------------------------------------------------ node kinds

    def _Constant(self, node: ast.Constant):
        if isinstance(node.value, (int, float, str, bool)) or node.value is None:
            return node.value
        raise NotConstant(node, f"{type(node.value).__name__} literal")

    def _Name(self, node: ast.Name):
        name = self.imports.t_name(node)      # `from tilelang.language import float32`
        if name is not None and lookup_dtype(name) is not None:
            return lookup_dtype(name)
        if name is not None and refused_dtype(name):
            return RefusedDType(name)
        return self.lookup(node.id, node)

    def _Attribute(self, node: ast.Attribute):
        if node.attr in ("dtype", "shape") and isinstance(node.value, ast.Name) \
                and self.buffer is not None:
            buffer = self.buffer(node.value.id)
            if buffer is not None:
                return buffer.dtype if node.attr == "dtype" else tuple(buffer.shape)
        name = self.imports.t_name(node)
        if name is not None:
            dtype = lookup_dtype(name)
            if dtype is not None:
                return dtype
            if refused_dtype(name):
                return RefusedDType(name)
        if node.attr in _DTYPE_FIELDS:
            try:
                value = self.fold(node.value)
            except NotConstant:
                value = None
            if isinstance(value, DType):
                # tvm.DataType(dtype).bits: the width a factory computes tile sizes from
                return value.bits if node.attr == "bits" else 1
        raise NotConstant(node, "attribute is not a constant")

    def _Tuple(self, node: ast.Tuple):
        return tuple(self.fold(e) for e in node.elts)

    _List = _Tuple

    def _UnaryOp(self, node: ast.UnaryOp):
        value = self.fold(node.operand)
        if isinstance(node.op, ast.Not):
            return not value
        if not is_number(value):
            raise NotConstant(node, "unary operator on a non-number")
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        if isinstance(value, float):
            shape_error("`~` needs an integer operand", node)
        return ~value

    def _BinOp(self, node: ast.BinOp):
        a, b = self.fold(node.left), self.fold(node.right)
        if isinstance(node.op, ast.Add) and isinstance(a, tuple) and isinstance(b, tuple):
            return a + b
        return apply_binop(node.op, a, b, node)

    def _BoolOp(self, node: ast.BoolOp):
        values = [self.fold(v) for v in node.values]
        result = values[0]
        for v in values[1:]:
            result = (result and v) if isinstance(node.op, ast.And) else (result or v)
        return result

    def _Compare(self, node: ast.Compare):
        left = self.fold(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            fn = COMPARES.get(type(op)) or _MEMBERSHIP.get(type(op))
            if fn is None:
                raise NotConstant(node, "comparison operator")
            right = self.fold(right_node)
            if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(right, (tuple, str)):
                raise NotConstant(node, "`in` over a value that is not a tuple or string")
            try:
                holds = fn(left, right)
            except TypeError:       # `"sum" < 3`: Python refuses it at trace time too
                shape_error(f"cannot compare {left!r} with {right!r}", node)
            if not holds:
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp):
        return self.fold(node.body) if self.fold(node.test) else self.fold(node.orelse)

    def _Subscript(self, node: ast.Subscript):
        base = self.fold(node.value)
        index = self.fold(node.slice)
        if isinstance(base, dict):
            if index in base:
                return base[index]
            shape_error(f"{index!r} is not a key of the table {base!r}", node)
        if isinstance(base, tuple) and isinstance(index, int) and not isinstance(index, bool):
            if -len(base) <= index < len(base):
                return base[index]
            shape_error(f"index {index} out of range for a tuple of {len(base)}", node)
        raise NotConstant(node, "subscript of a non-tuple")

    def _Dict(self, node: ast.Dict):
        """`{"batch": batch}` (keyword arguments spelled as a dict), `{T.float32: 4,
        T.float16: 2}` (a table subscripted by a dtype): keys that are strings, numbers
        or dtypes."""
        if any(k is None for k in node.keys):
            raise NotConstant(node, "`**` inside a dict")
        keys = [self.fold(k) for k in node.keys]
        if not all(isinstance(k, (str, int, float, DType)) for k in keys):
            raise NotConstant(node, "a dict with keys that are not strings, numbers or "
                                    "dtypes")
        return dict(zip(keys, (self.fold(v) for v in node.values)))

    def _call_helper(self, fn: ast.FunctionDef, node: ast.Call):
        from .helpers import bind_arguments, evaluate
        values = {name: self.fold(expr) for name, expr in bind_arguments(fn, node).items()}

        def fold(expr: ast.AST, local: dict[str, object]):
            def lookup(name: str, where: ast.AST):
                return local[name] if name in local else self.lookup(name, where)
            return ConstFolder(self.imports, lookup, None, self.helper,
                               self.depth + 1).fold(expr)
        return evaluate(fn, values, fold, self.depth + 1)

    def _Call(self, node: ast.Call):
        if isinstance(node.func, ast.Name) and self.helper is not None \
                and not self.imports.binds(node.func.id) \
                and node.func.id not in _BUILTINS:
            fn = self.helper(node.func.id)
            if fn is not None:
                return self._call_helper(fn, node)
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise NotConstant(node, "call with keywords")
        name = self.imports.t_name(node.func)
        args = [self.fold(a) for a in node.args]
        path = self.imports.dotted(node.func)
        if path in _MATH and all(is_number(a) for a in args):
            try:
                return _MATH[path](*args)
            except (ValueError, OverflowError, TypeError) as exc:
                shape_error(f"`{ast.unparse(node)}` has no value: {exc}", node)
        if path in _DATA_TYPE and len(args) == 1:
            # TVM's DataType(dtype) is the dtype as a value: its .bits is read above
            dtype = args[0] if isinstance(args[0], DType) else \
                lookup_dtype(args[0]) if isinstance(args[0], str) else None
            if dtype is None:
                shape_error(f"`{ast.unparse(node)}`: DataType of {args[0]!r}, which is not "
                            f"a dtype we model", node)
            return dtype
        if name in ("ceildiv", "cdiv") and len(args) == 2:
            return ceildiv(args[0], args[1], node)
        if name is not None and lookup_dtype(name) is not None and len(args) == 1:
            return typed_literal(lookup_dtype(name), args[0], node)
        if isinstance(node.func, ast.Name) and not self.imports.binds(node.func.id):
            return self._builtin(node, node.func.id, args)
        raise NotConstant(node, "call is not a constant")

    def _builtin(self, node: ast.Call, name: str, args: list):
        numbers = all(is_number(a) for a in args)
        if name in ("min", "max") and args and numbers:
            return (min if name == "min" else max)(args)
        if name == "abs" and len(args) == 1 and numbers:
            return abs(args[0])
        if name == "int" and len(args) == 1 and numbers and math.isfinite(args[0]):
            return int(args[0])
        if name == "float" and len(args) == 1 and numbers:
            return float(args[0])
        if name == "len" and len(args) == 1 and isinstance(args[0], (tuple, str)):
            return len(args[0])
        raise NotConstant(node, f"call of `{name}` is not a constant")
