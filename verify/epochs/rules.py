"""The reducer rules that look at one statement alone, whatever path led to it:
R206 (update form vs op), R209 (index in bounds, via verify.epochs.bounds), R210 (contribution
dtype), R211 (aliasing a reducer or handing it to an op that is not a reducer op),
R212 (op/dtype), R213 (legacy fill value), R214 (finalize destination).

The rules that depend on the epoch state (reads, stores, copies, R200-R205, R208) are
verify.epochs.checker'."""
from __future__ import annotations

import math

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Diagnostic, Note, error
from verify_reducer.spec.dtypes import DType, converts_exactly
from verify_reducer.spec.ops import MONOIDS, OP_ALIASES, reducer_monoid
from verify_reducer.spec.printer import format_expr

from verify_reducer.verify.epochs.bounds import check_index
from verify_reducer.verify.epochs.scopes import Context

# how each written update form reads in the program
FORM_TEXT = {
    "reducer_update": "T.reducer_update({acc}[...], value)",
    "+=": "{acc}[...] += value", "-=": "{acc}[...] -= value", "*=": "{acc}[...] *= value",
    "&=": "{acc}[...] &= value", "|=": "{acc}[...] |= value", "^=": "{acc}[...] ^= value",
    "store-add": "{acc}[...] = {acc}[...] + value",
    "store-sub": "{acc}[...] = {acc}[...] - value",
    "store-mul": "{acc}[...] = {acc}[...] * value",
    "store-max": "{acc}[...] = T.max({acc}[...], value)",
    "store-min": "{acc}[...] = T.min({acc}[...], value)",
    "store-and": "{acc}[...] = {acc}[...] & value",
    "store-or": "{acc}[...] = {acc}[...] | value",
    "store-xor": "{acc}[...] = {acc}[...] ^ value",
}
# the idiomatic legacy form of each op, for hints
_LEGACY_FORM = {"sum": "+=", "product": "*=", "max": "store-max", "min": "store-min",
                "bitand": "&=", "bitor": "|=", "bitxor": "^="}


def op_name(buf: ir.Buffer) -> str:
    op = buf.reducer.op
    return OP_ALIASES.get(op, op)


def update_hint(buf: ir.Buffer) -> str:
    op = op_name(buf)
    forms = [f"`T.reducer_update({buf.name}[...], value)`"]
    if op in _LEGACY_FORM:
        forms.append("`" + FORM_TEXT[_LEGACY_FORM[op]].format(acc=buf.name) + "`")
    return f"a {op} reducer is updated with " + " or ".join(forms)


def check_stmt(stmt: ir.Stmt, ctx: Context) -> list[Diagnostic]:
    if isinstance(stmt, ir.Alloc) and stmt.buffer.is_reducer:
        return _op_supported(stmt)
    if isinstance(stmt, ir.ReducerUpdate):
        return [*_form_matches(stmt), *_index_in_bounds(stmt, ctx),
                *_contribution_dtype(stmt.reducer, stmt.value, "contribution", stmt.span)]
    if isinstance(stmt, ir.ReducerInit):
        out = []
        if stmt.seed is not None:
            out += _contribution_dtype(stmt.reducer, stmt.seed, "seed", stmt.span)
        if stmt.form == "fill" and stmt.fill_value is not None:
            out += _legacy_fill(stmt)
        return out
    if isinstance(stmt, ir.ReducerFinalize):
        return _destination(stmt)
    if isinstance(stmt, ir.Alias) and stmt.buffer.is_reducer:
        b = stmt.buffer
        return [error("R211", f"`{stmt.name} = {b.name}` gives reducer `{b.name}` a second "
                      f"name; the verifier tracks a reducer's epoch through one name only, "
                      f"so updates through `{stmt.name}` could not be checked", stmt.span,
                      Note(f"`{b.name}` is allocated here", b.span),
                      hint=f"use `{b.name}` directly")]
    if isinstance(stmt, ir.Fill) and stmt.region.buffer.is_reducer:
        b = stmt.region.buffer
        return [error("R211", f"`T.fill` writes into part of reducer `{b.name}`; a reducer's "
                      f"partial values are not ordinary memory", stmt.span,
                      hint=f"start an epoch with `T.reducer_init({b.name})` (every partial "
                           f"at the identity) or `T.reducer_init({b.name}, seed)`")]
    return []


# ----------------------------------------------------------------------------- R212

def _op_supported(stmt: ir.Alloc) -> list[Diagnostic]:
    b = stmt.buffer
    op = op_name(b)
    monoid = reducer_monoid(b.reducer)
    if monoid is None:
        return [error("R212", f"reducer `{b.name}` uses op=\"{b.reducer.op}\", which is not an "
                      f"associative combine operation verify-reducer knows; a deferred "
                      f"reduction may combine partials in any order", stmt.span,
                      hint="use one of " + ", ".join(MONOIDS) +
                           " (an average is a sum divided by the count after finalize; "
                           "abs-max is a max reducer fed `T.abs(value)`; or declare the "
                           "op with `@T.reducer_op`)")]
    if monoid.is_user and not monoid.supports(b.dtype):
        return [error("R212", f"reducer `{b.name}` is {b.dtype}, but reducer op `{op}` is "
                      f"declared for {monoid.dtype}: its laws are proved for that dtype "
                      f"only", stmt.span, Note(f"`{op}` is declared here", monoid.span),
                      hint=f"allocate the reducer as {monoid.dtype}, or declare another "
                           f"op for {b.dtype}")]
    if not monoid.supports(b.dtype):
        return [error("R212", f"reducer `{b.name}` combines with {op}, a bitwise operation, "
                      f"but its dtype {b.dtype} is not an integer type", stmt.span,
                      hint=f"bitwise reducers need an integer dtype such as T.int32 or "
                           f"T.uint32; for {b.dtype} values use sum, product, max or min")]
    return []


# ----------------------------------------------------------------------------- R206

def _form_matches(u: ir.ReducerUpdate) -> list[Diagnostic]:
    b = u.reducer
    op = op_name(b)
    form_op = OP_ALIASES.get(u.form_op, u.form_op)
    if reducer_monoid(b.reducer) is None or form_op == op:
        return []
    written = FORM_TEXT.get(u.form, u.form).format(acc=b.name)
    return [error("R206", f"`{written}` is a {form_op} update, but `{b.name}` is {_a(op)} "
                  f"reducer (op=\"{b.reducer.op}\"): the value would be combined with "
                  f"{op}, not {form_op}", u.span,
                  Note(f"`{b.name}` is declared with op=\"{b.reducer.op}\" here", b.span),
                  hint=update_hint(b) + f"; if a {form_op} is meant, allocate a separate "
                       f"reducer with op=\"{form_op}\"")]


# ----------------------------------------------------------------------------- R209

def _index_in_bounds(u: ir.ReducerUpdate, ctx: Context) -> list[Diagnostic]:
    b = u.reducer
    if len(u.indices) != len(b.shape):
        return [error("R209", f"the update of `{b.name}` gives {len(u.indices)} index(es), "
                      f"but `{b.name}` has {len(b.shape)} dimension(s) (shape "
                      f"{_shape(b.shape)})", u.span,
                      hint=f"index every dimension of `{b.name}`")]
    out = []
    for oob in check_index(u.indices, b.shape, ctx):
        idx = u.indices[oob.dim]
        which = f"index `{format_expr(idx)}`"
        if len(b.shape) > 1:
            which += f" (dimension {oob.dim})"
        valid = f"0..{oob.extent - 1}"
        if oob.proved:
            if oob.values:
                example = ", ".join(f"{n} = {v}" for n, v in oob.values)
                why = f"{example} gives index {oob.index_value}, outside {valid}"
            else:
                why = f"it is {oob.index_value}, outside {valid}"
            msg = f"{which} of reducer `{b.name}` can leave its shape {_shape(b.shape)}: {why}"
        else:
            msg = (f"{which} of reducer `{b.name}` may leave its shape {_shape(b.shape)}: "
                   f"the proof that it stays within {valid} was inconclusive (the solver "
                   f"gave up), so the update is treated as possibly out of bounds")
        out.append(error("R209", msg, u.span,
                         Note(f"`{b.name}` is allocated with shape {_shape(b.shape)} here",
                              b.span),
                         hint=f"fix the loop bounds, or guard the update with "
                              f"`if {format_expr(idx)} < {oob.extent}:`"))
    return out


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


# ----------------------------------------------------------------------------- R210

def _contribution_dtype(b: ir.Buffer, value: ir.Expr, what: str, span) -> list[Diagnostic]:
    d = b.dtype
    if isinstance(value, ir.Const) and value.weak:
        if _literal_fits(value.value, d):
            return []
        if isinstance(value.value, float) and d.is_int:
            why = (f"the float literal {value.value!r} cannot be added to an integer "
                   f"reducer without truncation")
            hint = f"write an integer literal, or `T.cast(value, T.{d.name})` to truncate"
        else:
            why = f"the literal {value.value!r} is not representable in {d}"
            hint = f"use a value within the range of {d}, or a wider reducer dtype"
        return [error("R210", f"{what} to `{b.name}` ({_a(d.name)} reducer): {why}", span,
                      hint=hint)]
    if converts_exactly(value.dtype, d):
        return []
    loss = _loss(value.dtype, d)
    shown = format_expr(value)
    return [error("R210", f"{what} `{shown}` is {value.dtype}, but `{b.name}` is {_a(d.name)} "
                  f"reducer: {loss}", span,
                  Note(f"`{b.name}` is allocated as {d} here", b.span),
                  hint=f"convert it explicitly with `T.cast({shown}, T.{d.name})` if "
                       f"that loss is intended, or allocate `{b.name}` with dtype "
                       f"{value.dtype}")]


def _a(word: str) -> str:
    """word with its indefinite article: "an int32", "a sum"."""
    return ("an " if word[0] in "aeiou" else "a ") + word


def _loss(src: DType, dst: DType) -> str:
    if src.is_float and dst.is_int:
        return f"a {src} value would be truncated to an integer"
    if src.is_float:
        return f"{src} values lose precision or range in {dst}"
    if dst.is_float:
        return f"large {src} values are not exactly representable in {dst}"
    if src.kind == "int" and dst.kind == "uint":
        return f"negative {src} values do not fit in {dst}"
    return f"{src} values can overflow {dst}"


def _literal_fits(v, d: DType) -> bool:
    if isinstance(v, bool):
        return True
    if d.is_int:
        return isinstance(v, int) and d.lowest <= v <= d.highest
    if d.is_bool:
        return v in (0, 1)
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return math.isnan(v) or not d.saturates    # float8 turns ±inf into ±finite_max
    if isinstance(v, float):   # a float literal is rounded to the dtype, as in C
        return abs(v) <= d.finite_max
    return float(d.quantize(np.array([float(v)]))[0]) == v


# ----------------------------------------------------------------------------- R213

def _const_value(e: ir.Expr):
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.Unary) and e.op == "neg":
        v = _const_value(e.a)
        return None if v is None else -v
    if isinstance(e, ir.Cast):
        return _const_value(e.a)
    return None


def _legacy_fill(init: ir.ReducerInit) -> list[Diagnostic]:
    b = init.reducer
    op = op_name(b)
    monoid = reducer_monoid(b.reducer)
    if monoid is None or not monoid.supports(b.dtype):
        return []       # R212 already says the op is wrong
    identity = monoid.identity(b.dtype)
    value = _const_value(init.fill_value)
    if value is not None and value == identity:
        return []
    if monoid.idempotent:
        # v ⊕ v = v: however many threads started at v, the old result was
        # v ⊕ (contributions): a seed applied once, independent of the thread count.
        # Accepted (see the module doc of verify.epochs.checker).
        return []
    shown = format_expr(init.fill_value)
    effect = {"sum": f"every result got P · {shown} added",
              "product": f"every result got multiplied by ({shown})^P",
              "bitxor": f"every result got {shown} XORed in P times (so it depended on "
                        f"whether P is even)"}.get(
        op, f"every result got {shown} combined into it P times by {op}")
    not_identity = ("is not a constant, so it cannot be shown to be the identity "
                    f"{identity}" if value is None else f"is not the identity {identity}")
    return [error("R213", f"`T.fill({b.name}, {shown})` starts legacy {op} reducer `{b.name}` "
                  f"at {shown}, which {not_identity} of {op}: the old meaning depended on "
                  f"the number of participating threads — each of the P threads' partials "
                  f"started at {shown}, so {effect}", init.span,
                  hint=f"start the epoch with `T.reducer_init({b.name}, {shown})`: every "
                       f"partial starts at the identity and the seed {shown} is combined "
                       f"exactly once; use `T.clear({b.name})` if no seed is meant")]


# ----------------------------------------------------------------------------- R214

def _destination(f: ir.ReducerFinalize) -> list[Diagnostic]:
    b, dst = f.reducer, f.dst
    if dst is None:
        return []
    if dst.is_reducer:
        return [error("R211", f"`T.finalize_reducer({b.name}, {dst.name})` writes into "
                      f"`{dst.name}`, which is itself a reducer; a finalize writes an "
                      f"ordinary buffer", f.span,
                      hint=f"finalize into a fragment: "
                           f"`{b.name}_out = T.alloc_fragment({_shape(b.shape)}, T.{b.dtype.name})`")]
    problems = []
    if tuple(dst.shape) != tuple(b.shape):
        problems.append(f"its shape is {_shape(dst.shape)} but the reducer's is "
                        f"{_shape(b.shape)}")
    if dst.dtype != b.dtype:
        problems.append(f"its dtype is {dst.dtype} but the reducer's is {b.dtype}")
    if not problems:
        return []
    return [error("R214", f"finalize destination `{dst.name}` does not match reducer "
                  f"`{b.name}`: " + " and ".join(problems), f.span,
                  Note(f"`{dst.name}` is allocated here", dst.span),
                  Note(f"`{b.name}` is allocated here", b.span),
                  hint=f"finalize into a buffer of shape {_shape(b.shape)} and dtype "
                       f"{b.dtype}, then copy or convert from it")]
