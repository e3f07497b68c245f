"""A readable TileLang-like text of the logical IR (`verify-reducer emit --what ir`).

Reducer statements are shown in their one canonical form — `reducer_init`,
`reducer_update(acc, (i,), v)`, `finalize_reducer` — with the surface they came from in a
comment (`# from: acc[i] += v`), rebuilt from the IR so no source text is needed."""
from __future__ import annotations

import math

from .ir import (ATOMIC_OPS, Alias, Alloc, AtomicUpdate, Binary, Call, Cast, Compare, Const,
                 Copy, Expr, Fill, If, Kernel, Let, Load, Logical, ParallelFor, PrimFunc,
                 Program, Reduce, ReducerFinalize, ReducerInit, ReducerUpdate, Region, Select,
                 SerialFor, Stmt, Store, ThreadBinding, Unary, Var, WarpGroup, walk)
from .ir import Gemm
from . import user_ops as uo
from .ops import reducer_monoid
from .reinterpret import NAME as REINTERPRET
from .user_ops import UserMonoid

INDENT = "    "

# Python's precedence levels, loosest first: parentheses go where Python needs them
_PREC = {"or": 1, "and": 2, "not": 3, "compare": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8,
         "+": 9, "-": 9, "*": 10, "/": 10, "//": 10, "%": 10, "unary": 11, "atom": 13}


def format_user_op(op: UserMonoid) -> str:
    """A declared reducer op as the IR holds it (docs/design.md §22): its decorator with
    the dtype and the identity's value, and its body typed and with module constants
    resolved — what every stage computes, not the text the user wrote."""
    where = f"  # declared at line {op.span.line}" if op.span is not None else ""
    a, b = op.params
    return "\n".join([f"@T.reducer_op(dtype=T.{op.dtype}, identity={op.identity_value})"
                      f"{where}", f"def {op.name}({a}, {b}):",
                      f"{INDENT}return {_op_node(op.body, op.params)[0]}"])


def _user_ops(func: PrimFunc) -> list[UserMonoid]:
    """The declared ops func's reducers use, in allocation order, each once."""
    found: dict[UserMonoid, None] = {}
    for stmt in walk(func.kernel.body):
        if isinstance(stmt, Alloc) and stmt.buffer.is_reducer:
            op = reducer_monoid(stmt.buffer.reducer)
            if isinstance(op, UserMonoid):
                found.setdefault(op, None)
    return list(found)


def _op_node(n, params: tuple[str, str]) -> tuple[str, int]:
    """(text, precedence) of a node of a declared op's body (spec.user_ops)."""
    def wrap(child, min_prec: int) -> str:
        text, prec = _op_node(child, params)
        return f"({text})" if prec < min_prec else text

    if isinstance(n, uo.Param):
        return params[n.index], _PREC["atom"]
    if isinstance(n, uo.Lit):
        return str(n.value), _PREC["atom"] if not isinstance(n.value, int) or \
            isinstance(n.value, bool) or n.value >= 0 else _PREC["unary"]
    if isinstance(n, uo.UnaryOp):
        if n.op == "not":
            return f"not {wrap(n.a, _PREC['not'])}", _PREC["not"]
        sign = "-" if n.op == "neg" else "~"
        return f"{sign}{wrap(n.a, _PREC['unary'])}", _PREC["unary"]
    if isinstance(n, (uo.BinaryOp, uo.LogicalOp)):
        prec = _PREC[n.op]
        return f"{wrap(n.a, prec)} {n.op} {wrap(n.b, prec + 1)}", prec
    if isinstance(n, uo.CompareOp):
        prec = _PREC["compare"]
        return f"{wrap(n.a, prec + 1)} {n.op} {wrap(n.b, prec + 1)}", prec
    if isinstance(n, uo.SelectOp):
        args = ", ".join(_op_node(x, params)[0] for x in (n.cond, n.a, n.b))
        return f"T.if_then_else({args})", _PREC["atom"]
    if isinstance(n, uo.ExtremumOp):
        return f"T.{n.op}({_op_node(n.a, params)[0]}, {_op_node(n.b, params)[0]})", \
            _PREC["atom"]
    if isinstance(n, uo.CastOp):
        return f"T.cast({_op_node(n.a, params)[0]}, T.{n.dtype})", _PREC["atom"]
    raise TypeError(f"cannot print {type(n).__name__}")


def format_program(program: Program) -> str:
    parts = [f"# {program.path}"]
    parts += [format_func(f) for f in program.funcs.values()]
    return "\n\n".join(parts)


def format_func(func: PrimFunc) -> str:
    params = ", ".join(f"{p.name}: T.Tensor({_shape(p.shape)}, T.{p.dtype})"
                       for p in func.params)
    lines = [line for op in _user_ops(func) for line in (*format_user_op(op).split("\n"), "")]
    lines += ["@T.prim_func", f"def {func.name}({params}):"]
    lines += _kernel(func.kernel, 1)
    return "\n".join(lines)


def _kernel(k: Kernel, depth: int) -> list[str]:
    names = ", ".join(v.name for v in k.block_vars)
    if len(k.block_vars) > 1:
        names = f"({names})"
    grid = ", ".join(str(g) for g in k.grid)
    head = f"{INDENT * depth}with T.Kernel({grid}, threads={k.threads}) as {names}:"
    return [head, *_body(k.body, depth + 1)]


def _shape(shape: tuple[int, ...]) -> str:
    inner = ", ".join(str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


# ----------------------------------------------------------------------------- statements

def _body(body: tuple[Stmt, ...], depth: int) -> list[str]:
    if not body:
        return [INDENT * depth + "pass"]
    lines: list[str] = []
    for stmt in body:
        lines += _stmt(stmt, depth)
    return lines


def _stmt(s: Stmt, depth: int) -> list[str]:
    pad = INDENT * depth
    if isinstance(s, ParallelFor):
        names = ", ".join(v.name for v in s.vars)
        extents = ", ".join(str(e) for e in s.extents)
        return [f"{pad}for {names} in T.Parallel({extents}):", *_body(s.body, depth + 1)]
    if isinstance(s, SerialFor):
        return [f"{pad}for {s.var.name} in {_serial_range(s)}:", *_body(s.body, depth + 1)]
    if isinstance(s, If):
        return _if(s, depth, "if")
    if isinstance(s, WarpGroup):
        groups = ", ".join(str(g) for g in s.groups)
        return [f"{pad}with T.ws({groups}):", *_body(s.body, depth + 1)]
    return [pad + _simple(s)]


def headline(s: Stmt) -> str:
    """The statement's first line as format_func prints it (a loop's or an if's header,
    without its body)."""
    return _stmt(s, 0)[0] if isinstance(s, (ParallelFor, SerialFor, If, WarpGroup)) \
        else _simple(s)


def _if(s: If, depth: int, keyword: str) -> list[str]:
    pad = INDENT * depth
    lines = [f"{pad}{keyword} {format_expr(s.cond)}:", *_body(s.then, depth + 1)]
    if len(s.orelse) == 1 and isinstance(s.orelse[0], If):
        lines += _if(s.orelse[0], depth, "elif")
    elif s.orelse:
        lines += [f"{pad}else:", *_body(s.orelse, depth + 1)]
    return lines


def _serial_range(s: SerialFor) -> str:
    spelled = {"serial": "T.serial", "pipelined": "T.Pipelined", "unroll": "T.unroll",
               "range": "range"}[s.kind]
    starts_at_zero = isinstance(s.start, Const) and s.start.value == 0
    args = [format_expr(s.stop)] if starts_at_zero and s.step == 1 else \
        [format_expr(s.start), format_expr(s.stop)]
    if s.step != 1:
        args.append(str(s.step))
    if s.num_stages is not None:
        args.append(f"num_stages={s.num_stages}")
    return f"{spelled}({', '.join(args)})"


def _simple(s: Stmt) -> str:
    if isinstance(s, Alloc):
        return _alloc(s)
    if isinstance(s, Let):
        return f"{s.var.name} = {format_expr(s.value)}"
    if isinstance(s, Alias):
        return f"{s.name} = {s.buffer.name}  # alias"
    if isinstance(s, Store):
        return f"{_access(s.buffer.name, s.indices)} = {format_expr(s.value)}"
    if isinstance(s, Copy):
        return f"T.copy({_region(s.src)}, {_region(s.dst)})"
    if isinstance(s, AtomicUpdate):
        name = {v: k for k, v in ATOMIC_OPS.items()}[s.op]
        order = "" if s.memory_order is None else f", memory_order={s.memory_order!r}"
        return f"T.{name}({_access(s.buffer.name, s.indices)}, {format_expr(s.value)}{order})"
    if isinstance(s, Fill):
        return f"T.fill({_region(s.region)}, {format_expr(s.value)})"
    if isinstance(s, ReducerInit):
        return _init(s)
    if isinstance(s, ReducerUpdate):
        return _update(s)
    if isinstance(s, ReducerFinalize):
        return _finalize(s)
    if isinstance(s, Reduce):
        # TileLang's reduce_abssum has no `clear` (it always clears)
        clear = "" if s.kind == "abssum" else f", clear={s.clear}"
        return f"T.reduce_{s.kind}({s.src.name}, {s.dst.name}, dim={s.dim}{clear})"
    if isinstance(s, Gemm):
        return _gemm(s)
    raise TypeError(f"cannot print {type(s).__name__}")


def _gemm(s: Gemm) -> str:
    args = [s.a.name, s.b.name, s.c.name]
    if s.transpose_a:
        args.append("transpose_A=True")
    if s.transpose_b:
        args.append("transpose_B=True")
    if s.policy != "Square":
        args.append(f"policy=T.GemmWarpPolicy.{s.policy}")
    if not (isinstance(s.clear_accum, Const) and s.clear_accum.value is False):
        args.append(f"clear_accum={format_expr(s.clear_accum)}")
    return f"T.gemm({', '.join(args)})"


def _alloc(s: Alloc) -> str:
    b = s.buffer
    call = f"T.alloc_{b.scope}({_shape(b.shape)}, T.{b.dtype}"
    if b.reducer is not None:
        call += f', op="{b.reducer.op}"'
        if b.reducer.replication is not None:
            call += f', replication="{b.reducer.replication}"'
    return f"{b.name} = {call})"


def _region(r: Region) -> str:
    starts_zero = all(isinstance(x, Const) and x.value == 0 for x in r.starts)
    if starts_zero and tuple(r.extents) == tuple(r.buffer.shape):
        return r.buffer.name
    dims = []
    for start, extent in zip(r.starts, r.extents):
        if isinstance(start, Const) and isinstance(start.value, int):
            dims.append(f"{start.value}:{start.value + extent}")
        else:
            first = format_expr(start)
            dims.append(f"{first}:{first} + {extent}")
    return f"{r.buffer.name}[{', '.join(dims)}]"


def _access(name: str, indices: tuple[Expr, ...]) -> str:
    return f"{name}[{', '.join(format_expr(i) for i in indices)}]"


# ----------------------------------------------------------------------------- reducers

def _init(s: ReducerInit) -> str:
    args = s.reducer.name + (f", {format_expr(s.seed)}" if s.seed is not None else "")
    text = f"reducer_init({args})"
    if s.form == "implicit":
        return text + "  # implicit: the allocation opens the epoch"
    if s.form == "fill":
        return text + f"  # from: T.fill({s.reducer.name}, {format_expr(s.fill_value)})"
    if s.form == "clear":
        return text + f"  # from: T.clear({s.reducer.name})"
    return text


_AUG = {"+=": "+=", "-=": "-=", "*=": "*=", "&=": "&=", "|=": "|=", "^=": "^="}
_STORE_OPS = {"store-add": "+", "store-sub": "-", "store-mul": "*", "store-and": "&",
              "store-or": "|", "store-xor": "^"}


def _update(s: ReducerUpdate) -> str:
    indices = ", ".join(format_expr(i) for i in s.indices)
    if len(s.indices) == 1:
        indices += ","
    text = f"reducer_update({s.reducer.name}, ({indices}), {format_expr(s.value)})"
    source = _update_source(s)
    return text + (f"  # from: {source}" if source else "")


def _update_source(s: ReducerUpdate) -> str | None:
    """The legacy surface the update was written in, rebuilt from the IR."""
    target = _access(s.reducer.name, s.indices)
    value = s.value
    if s.form in ("-=", "store-sub"):
        value = _unnegate(value)
    shown = format_expr(value)
    if s.form in _AUG:
        return f"{target} {_AUG[s.form]} {shown}"
    if s.form in _STORE_OPS:
        return f"{target} = {target} {_STORE_OPS[s.form]} {shown}"
    if s.form in ("store-max", "store-min"):
        return f"{target} = T.{s.form[6:]}({target}, {shown})"
    return None


def _unnegate(value: Expr) -> Expr:
    if isinstance(value, Unary) and value.op == "neg":
        return value.a
    if isinstance(value, Const):
        return Const(-value.value, value.dtype, value.span, value.weak)
    return value


def _finalize(s: ReducerFinalize) -> str:
    args = s.reducer.name + (f", {s.dst.name}" if s.dst is not None else "")
    if s.batch is not None:
        args += f", batch={s.batch}"
    text = f"finalize_reducer({args})"
    if s.dst is None:
        text += f"  # in place (legacy): {s.reducer.name} is readable after"
    return text


# ----------------------------------------------------------------------------- expressions

def format_expr(e: Expr) -> str:
    return _expr(e)[0]


def _wrap(e: Expr, min_prec: int) -> str:
    text, prec = _expr(e)
    return f"({text})" if prec < min_prec else text


def _expr(e: Expr) -> tuple[str, int]:
    if isinstance(e, Const):
        return _const(e)
    if isinstance(e, Var):
        return e.name, _PREC["atom"]
    if isinstance(e, ThreadBinding):
        return "T.get_thread_binding()", _PREC["atom"]
    if isinstance(e, Load):
        return _access(e.buffer.name, e.indices), _PREC["atom"]
    if isinstance(e, Binary):
        prec = _PREC[e.op]
        # left-associative: the right operand needs parentheses at equal precedence
        return f"{_wrap(e.a, prec)} {e.op} {_wrap(e.b, prec + 1)}", prec
    if isinstance(e, Compare):
        prec = _PREC["compare"]
        return f"{_wrap(e.a, prec + 1)} {e.op} {_wrap(e.b, prec + 1)}", prec
    if isinstance(e, Logical):
        prec = _PREC[e.op]
        return f"{_wrap(e.a, prec)} {e.op} {_wrap(e.b, prec + 1)}", prec
    if isinstance(e, Unary):
        if e.op == "not":
            return f"not {_wrap(e.a, _PREC['not'])}", _PREC["not"]
        sign = "-" if e.op == "neg" else "~"
        return f"{sign}{_wrap(e.a, _PREC['unary'])}", _PREC["unary"]
    if isinstance(e, Call) and e.func == REINTERPRET:
        return f"T.reinterpret({format_expr(e.args[0])}, T.{e.dtype})", _PREC["atom"]
    if isinstance(e, Call):
        return f"T.{e.func}({', '.join(format_expr(a) for a in e.args)})", _PREC["atom"]
    if isinstance(e, Cast):
        return f"T.cast({format_expr(e.a)}, T.{e.dtype})", _PREC["atom"]
    if isinstance(e, Select):
        args = ", ".join(format_expr(x) for x in (e.cond, e.a, e.b))
        return f"T.if_then_else({args})", _PREC["atom"]
    raise TypeError(f"cannot print {type(e).__name__}")


def _const(c: Const) -> tuple[str, int]:
    value = c.value
    if isinstance(value, float) and math.isinf(value):
        text = f"T.infinity(T.{c.dtype})"
        return (f"-{text}", _PREC["unary"]) if value < 0 else (text, _PREC["atom"])
    literal = repr(value)
    if c.weak:
        return literal, _PREC["unary"] if literal.startswith("-") else _PREC["atom"]
    return f"T.{c.dtype}({literal})", _PREC["atom"]
