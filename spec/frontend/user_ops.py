"""`@T.reducer_op`: a module-level declaration of a reducer op, read (never run) into a
spec.user_ops.UserMonoid (docs/design.md §22):

    @T.reducer_op(dtype=T.int64, identity=IDENTITY)
    def argmax_packed(a, b):
        return T.if_then_else(a >> 32 > b >> 32, a, b)

Two operands, one `return` expression (a docstring may precede it), an integer dtype
and an identity that are compile-time constants. The body is typed here: the operands
have the declared dtype, an untyped literal or module constant adopts the dtype of the
operand it meets, and the two operands of an operator must then have one dtype (write
`T.cast` to convert: no promotion is implied). What the body may use: `+ - *`, `& | ^ ~`,
shifts by a constant in [0, bits), comparisons, `and`/`or`/`not`, `x if c else y`,
`T.if_then_else`, `T.max`, `T.min`, `T.cast` to an integer dtype or bool.

Every mistake is R600 at its construct; a float dtype is R602 (the laws are not proved
for floats: docs/decisions.md)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import NoReturn

from ..dtypes import BOOL, DType
from ..ops import OP_ALIASES
from ..source import Span
from ..user_ops import (BinaryOp, CastOp, CompareOp, ExtremumOp, Lit, LogicalOp, Node, Param,
                        SelectOp, UnaryOp, UserMonoid)
from .constants import ConstFolder, NotConstant, as_dtype
from .context import Opaque
from .errors import FrontendError, construct_name, fail

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!="}
_DIVISIONS = {ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


@dataclass(frozen=True)
class DeclaredOp(Opaque):
    """A module name bound to a `@T.reducer_op` declaration: usable as `op=` only."""
    monoid: UserMonoid | None = None


def malformed(message: str, where: ast.AST | Span, hint: str | None = None) -> NoReturn:
    fail("R600", message, where, hint)


def is_declaration(imports, node: ast.FunctionDef) -> bool:
    return any(imports.t_name(d.func if isinstance(d, ast.Call) else d) == "reducer_op"
               for d in node.decorator_list)


def declare(scan, node: ast.FunctionDef) -> UserMonoid:
    """The op a decorated function declares; R600/R602 (a FrontendError) otherwise."""
    decorator = _decorator(scan, node)
    if node.name.lower() in OP_ALIASES:
        malformed(f"reducer op `{node.name}` has the name of a built-in op "
                  f"({OP_ALIASES[node.name.lower()]}); `op=\"{node.name}\"` would be "
                  f"ambiguous", node, hint="give the declared op another name")
    if isinstance(scan.env.get(node.name), DeclaredOp):
        malformed(f"reducer op `{node.name}` is declared twice", node)
    options = _options(decorator)
    dtype = _dtype(scan, options["dtype"])
    params = _params(node)
    body_node = _return_expr(node)
    identity = _identity(scan, options["identity"], dtype)
    body = _Body(scan, params, dtype).root(body_node)
    return UserMonoid.declare(node.name, dtype, identity, body, params,
                              ast.unparse(body_node), Span.of(node))


def _decorator(scan, node: ast.FunctionDef) -> ast.expr:
    found = None
    for d in node.decorator_list:
        if scan.imports.t_name(d.func if isinstance(d, ast.Call) else d) == "reducer_op":
            found = d
        else:
            malformed(f"a reducer op takes no other decorator than `@T.reducer_op`, got "
                      f"`@{ast.unparse(d)}`", d)
    return found


def _options(decorator: ast.expr) -> dict[str, ast.expr]:
    usage = "write `@T.reducer_op(dtype=T.int64, identity=0)`"
    if not isinstance(decorator, ast.Call):
        malformed("`@T.reducer_op` needs `dtype=` and `identity=`", decorator, hint=usage)
    if decorator.args:
        malformed("`@T.reducer_op` takes keyword arguments only", decorator.args[0],
                  hint=usage)
    options = {}
    for kw in decorator.keywords:
        if kw.arg not in ("dtype", "identity"):
            malformed(f"`@T.reducer_op` got an unexpected keyword "
                      f"`{kw.arg or '**'}`", kw, hint=usage)
        options[kw.arg] = kw.value
    for needed in ("dtype", "identity"):
        if needed not in options:
            malformed(f"`@T.reducer_op` is missing `{needed}=`", decorator, hint=usage)
    return options


def _dtype(scan, node: ast.expr) -> DType:
    try:
        dtype = as_dtype(scan.folder.fold(node), node)
    except NotConstant:
        malformed("the dtype of a reducer op must be a compile-time constant", node)
    except FrontendError as exc:
        malformed(exc.diagnostic.message, node)
    if dtype.is_float:
        fail("R602", f"a {dtype} reducer op is refused: its laws are not proved for float "
             f"dtypes (a float combine that rounds is not associative, and the "
             f"interpreter has no error bound for a user-written combine)", node,
             hint="declare the op on an integer dtype (a fixed-point encoding), or use "
                  "the built-in sum, product, max or min")
    if not dtype.is_int:
        malformed(f"a reducer op needs an integer dtype, got {dtype}", node)
    return dtype


def _params(node: ast.FunctionDef) -> tuple[str, str]:
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    extra = args.vararg or args.kwarg or (args.kwonlyargs[0] if args.kwonlyargs else None)
    if extra is not None or len(names) != 2:
        malformed(f"reducer op `{node.name}` must take exactly two operands, "
                  f"`def {node.name}(a, b)`; it takes "
                  f"{len(names) + len(args.kwonlyargs)}"
                  + (" and star-parameters" if args.vararg or args.kwarg else ""), node)
    if args.defaults or any(d is not None for d in args.kw_defaults):
        malformed(f"the operands of reducer op `{node.name}` take no defaults",
                  args.defaults[0] if args.defaults else node)
    if names[0] == names[1]:
        malformed("the two operands need different names", node)
    return names[0], names[1]


def _return_expr(node: ast.FunctionDef) -> ast.expr:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]                      # a docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        where = body[1] if len(body) > 1 else (body[0] if body else node)
        malformed(f"the body of reducer op `{node.name}` must be one `return <expression>` "
                  f"statement (it has {len(body)} statement(s))", where,
                  hint="write the combine as one expression; `x if c else y` and "
                       "`T.if_then_else` choose between values")
    return body[0].value


def _identity(scan, node: ast.expr, dtype: DType) -> int:
    try:
        value = scan.folder.fold(node)
    except NotConstant as exc:
        malformed(f"the identity of a reducer op must be a compile-time constant "
                  f"({exc.why})", node)
    except FrontendError as exc:
        malformed(exc.diagnostic.message, node)
    if isinstance(value, bool) or not isinstance(value, int):
        malformed(f"the identity of a {dtype} reducer op must be an integer, got "
                  f"{value!r}", node)
    if not dtype.lowest <= value <= dtype.highest:
        malformed(f"the identity {value} does not fit {dtype} "
                  f"([{dtype.lowest}, {dtype.highest}])", node)
    return value


# ----------------------------------------------------------------------------- the body

@dataclass(frozen=True)
class _Weak:
    """An untyped literal (or module constant) not yet given a dtype."""
    value: int | bool
    node: ast.AST


class _Body:
    def __init__(self, scan, params: tuple[str, str], dtype: DType):
        self.scan = scan
        self.params = params
        self.dtype = dtype
        # the operands shadow module constants of the same name
        self.folder = ConstFolder(scan.imports, self._constant)

    def _constant(self, name: str, node: ast.AST):
        if name in self.params:
            raise NotConstant(node, f"`{name}` is an operand")
        return self.scan.folder.lookup(name, node)

    def root(self, node: ast.expr) -> Node:
        body = self.typed(self.expr(node), self.dtype)
        if body.dtype != self.dtype:
            malformed(f"the body computes a {body.dtype} value, but the op is declared "
                      f"{self.dtype}", node, hint=f"convert with T.cast(..., \"{self.dtype}\")")
        return body

    def typed(self, x, dtype: DType) -> Node:
        """x with a dtype; a weak literal becomes dtype's (it must fit)."""
        if not isinstance(x, _Weak):
            return x
        value = x.value
        if dtype.is_bool:
            if value not in (0, 1):
                malformed(f"{value} is not a bool", x.node)
            return Lit(bool(value), dtype)
        if not dtype.lowest <= int(value) <= dtype.highest:
            malformed(f"the literal {value} does not fit {dtype} "
                      f"([{dtype.lowest}, {dtype.highest}])", x.node)
        return Lit(int(value), dtype)

    def same(self, a, b, node: ast.AST, what: str) -> tuple[Node, Node]:
        """a and b with one dtype: a weak one adopts the other's, two weak ones the
        op's dtype."""
        if isinstance(a, _Weak) and isinstance(b, _Weak):
            a, b = self.typed(a, self.dtype), self.typed(b, self.dtype)
        elif isinstance(a, _Weak):
            a = self.typed(a, b.dtype)
        elif isinstance(b, _Weak):
            b = self.typed(b, a.dtype)
        if a.dtype != b.dtype:
            malformed(f"the operands of {what} have dtypes {a.dtype} and {b.dtype}; a "
                      f"reducer op converts nothing implicitly", node,
                      hint="write T.cast(x, \"dtype\") on one operand")
        return a, b

    def integer(self, x: Node, node: ast.AST, what: str) -> Node:
        if not x.dtype.is_int:
            malformed(f"{what} needs integer operands, got {x.dtype}", node)
        return x

    def boolean(self, x, node: ast.AST, what: str) -> Node:
        x = self.typed(x, BOOL)
        if not x.dtype.is_bool:
            malformed(f"{what} needs a bool (a comparison), got {x.dtype}", node)
        return x

    def expr(self, node: ast.expr):
        method = getattr(self, "_" + type(node).__name__, None)
        if isinstance(node, ast.Subscript):
            malformed("a reducer op reads its two operands only: subscripts are not "
                      "supported", node)
        if method is None:
            malformed(f"{construct_name(node)} are not supported in a reducer op", node)
        return method(node)

    def _fold_weak(self, node: ast.expr):
        """node as an untyped constant when it folds to one (e.g. `(1 << 32) - 1`)."""
        try:
            value = self.folder.fold(node)
        except (NotConstant, FrontendError):
            return None
        if isinstance(value, (bool, int)):
            return _Weak(value, node)
        malformed(f"a reducer op computes on integers; `{ast.unparse(node)}` is "
                  f"{value!r}", node)

    def _Name(self, node: ast.Name):
        if node.id in self.params:
            return Param(self.params.index(node.id), self.dtype)
        weak = self._fold_weak(node)
        if weak is None:
            malformed(f"`{node.id}` is neither an operand ({', '.join(self.params)}) nor a "
                      f"module constant", node)
        return weak

    def _Constant(self, node: ast.Constant):
        return self._fold_weak(node)

    def _UnaryOp(self, node: ast.UnaryOp):
        weak = self._fold_weak(node)
        if weak is not None:
            return weak
        a = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            return UnaryOp("not", self.boolean(a, node, "`not`"), BOOL)
        if isinstance(node.op, ast.UAdd):
            return a
        op = "neg" if isinstance(node.op, ast.USub) else "invert"
        return UnaryOp(op, self.integer(a, node, f"`{'-' if op == 'neg' else '~'}`"), a.dtype)

    def _BinOp(self, node: ast.BinOp):
        if type(node.op) in _DIVISIONS:
            malformed(f"`{_DIVISIONS[type(node.op)]}` is not supported in a reducer op (a "
                      f"division by zero, a negative power: no total meaning on integers)",
                      node)
        op = _BINARY.get(type(node.op))
        if op is None:
            malformed(f"{construct_name(node.op)} are not supported in a reducer op", node)
        weak = self._fold_weak(node)
        if weak is not None:
            return weak
        a, b = self.expr(node.left), self.expr(node.right)
        if op in ("<<", ">>"):
            return self._shift(op, a, b, node)
        a, b = self.same(a, b, node, f"`{op}`")
        self.integer(a, node, f"`{op}`")
        return BinaryOp(op, a, b, a.dtype)

    def _shift(self, op: str, a, b, node: ast.BinOp) -> Node:
        if isinstance(a, _Weak):
            malformed(f"the value shifted by `{op}` needs a dtype: write "
                      f"T.cast({ast.unparse(node.left)}, \"dtype\")", node.left)
        self.integer(a, node, f"`{op}`")
        if not isinstance(b, _Weak) or isinstance(b.value, bool) \
                or not 0 <= b.value < a.dtype.bits:
            malformed(f"a shift of {a.dtype} values needs a constant amount in "
                      f"[0, {a.dtype.bits}), got `{ast.unparse(node.right)}`", node.right)
        return BinaryOp(op, a, Lit(int(b.value), a.dtype), a.dtype)

    def _BoolOp(self, node: ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.boolean(self.expr(v), v, f"`{op}`") for v in node.values]
        result = values[0]
        for v in values[1:]:
            result = LogicalOp(op, result, v)
        return result

    def _Compare(self, node: ast.Compare):
        if len(node.ops) != 1:
            malformed("a chained comparison is not supported in a reducer op: write "
                      "`a < b and b < c`", node)
        op = _COMPARE.get(type(node.ops[0]))
        if op is None:
            malformed(f"`{ast.unparse(node)}` is not a supported comparison", node)
        weak = self._fold_weak(node)
        if weak is not None:
            return weak
        a, b = self.same(self.expr(node.left), self.expr(node.comparators[0]), node,
                         f"`{op}`")
        return CompareOp(op, a, b)

    def _IfExp(self, node: ast.IfExp):
        return self._select(node.test, node.body, node.orelse, node)

    def _select(self, test, body, orelse, node) -> Node:
        cond = self.boolean(self.expr(test), test, "a condition")
        a, b = self.same(self.expr(body), self.expr(orelse), node, "a choice")
        return SelectOp(cond, a, b, a.dtype)

    def _Call(self, node: ast.Call):
        name = self.scan.imports.t_name(node.func)
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            malformed("calls in a reducer op take positional arguments only", node)
        arity = {"max": 2, "min": 2, "if_then_else": 3, "cast": 2}.get(name)
        if arity is None:
            malformed(f"`{ast.unparse(node.func)}` is not supported in a reducer op (use "
                      f"T.max, T.min, T.if_then_else, T.cast)", node)
        if len(node.args) != arity:
            malformed(f"`T.{name}` takes {arity} arguments, got {len(node.args)}", node)
        if name == "if_then_else":
            return self._select(*node.args, node)
        if name == "cast":
            return self._cast(node)
        a, b = self.same(self.expr(node.args[0]), self.expr(node.args[1]), node,
                         f"`T.{name}`")
        return ExtremumOp(name, self.integer(a, node, f"`T.{name}`"), b, a.dtype)

    def _cast(self, node: ast.Call) -> Node:
        try:
            dtype = as_dtype(self.folder.fold(node.args[1]), node.args[1])
        except (NotConstant, FrontendError):
            malformed(f"`{ast.unparse(node.args[1])}` is not a dtype", node.args[1])
        if dtype.is_float:
            malformed(f"a reducer op computes on integers; T.cast to {dtype} is not "
                      f"supported", node)
        a = self.expr(node.args[0])
        if isinstance(a, _Weak):
            return self.typed(a, dtype)
        return CastOp(a, dtype)
