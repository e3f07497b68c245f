"""T.atomic_add / atomic_max / atomic_min in CUDA: what codegen.lower.atomics decided,
printed — the replica guard (`if (rep == 0)`, the loop's cells declare `rep`), the
fences of a memory order, and the native call on the element's address:

    if (rep == 0) atomicAdd(&B[...], value);

A 64-bit integer add goes through `unsigned long long` (the lowering's operand type:
two's complement adds alike). A destination dtype with no native instruction is
refused with the lowering's reason (docs/limits.md). A T.atomic_addxN (the unrolled
loop over its lanes) is one vector instruction: each lane's value evaluated with the
lane variable bound to it, then the call on the first lane's address —

    { const int k = 0; v0 = A[...k...]; }  { const int k = 1; v1 = ...; }
    { const int k = 0; atomicAdd(reinterpret_cast<half2*>(&B[...k...]), __halves2half2(v0, v1)); }

(four 16-bit lanes: PTX's `atom.global.add.noftz.v4.f16`, TileLang's instruction).
Nothing is decided here."""
from __future__ import annotations

from verify_reducer.spec import ir

from .cuda_access import Frame
from .cuda_unsupported import Unsupported
from .lower.atomics import AtomicIssue


def render_atomic(body, stmt: ir.AtomicUpdate, issue: AtomicIssue, frame: Frame) -> None:
    if issue.function is None:
        raise Unsupported(f"line {stmt.span.line}: T.atomic_* into {stmt.buffer.name}: "
                          f"{issue.unsupported}")
    if not frame.loop_vars:
        body.out.comment(f"line {stmt.span.line}: an atomic into {stmt.buffer.name}[...]: "
                         f"{issue.describe()}")
    place = body.place(stmt.buffer, stmt.indices, frame)
    value = body.exprs(frame).operand(stmt.value, stmt.buffer.dtype).text
    address = f"&{place.array}[{place.index.text}]"
    if issue.cas:
        _render_cas(body, stmt, issue, address, value)
        return
    if issue.operand_type != stmt.buffer.dtype.c_name:
        address = f"reinterpret_cast<{issue.operand_type}*>({address})"
        value = f"({issue.operand_type})({value})"
    body.fence(stmt, "before")
    guard = f"if (rep == {issue.guard_replica})" if issue.guard_replica is not None \
        else None
    with body.maybe_block(guard):
        if issue.fence_before:
            body.out.line("__threadfence();")
        body.out.line(f"{issue.function}({address}, {value});")
        if issue.fence_after:
            body.out.line("__threadfence();")
    body.fence(stmt, "after")


# how the lanes' values become the instruction's operand
_PACK = {"half2": "__halves2half2", "__nv_bfloat162": "__halves2bfloat162",
         "float2": "make_float2", "float4": "make_float4"}
_BITS = {"float16": "__half_as_ushort", "bfloat16": "__bfloat16_as_ushort"}


def render_vector_atomic(body, loop: ir.SerialFor, issue: AtomicIssue,
                         frame: Frame) -> None:
    """The unrolled lane loop of a T.atomic_addxN as its one instruction: each lane's
    value with the lane variable bound to its number, then the call on lane 0's
    address (the simulator checked that address's alignment)."""
    stmt = issue.stmt
    if issue.function is None:
        raise Unsupported(f"line {stmt.span.line}: T.atomic_addx{issue.vector} into "
                          f"{stmt.buffer.name}: {issue.unsupported}")
    dtype = stmt.buffer.dtype
    var = body.var(loop.var.name)
    lane_type = loop.var.dtype.c_name
    values = [body.names.get(("atomic_lane", stmt, k), f"{var}_v{k}")
              for k in range(issue.vector)]
    body.out.comment(f"line {stmt.span.line}: T.atomic_addx{issue.vector} into "
                     f"{stmt.buffer.name}[...]: {issue.describe()}")
    guard = f"if (rep == {issue.guard_replica})" if issue.guard_replica is not None \
        else ""
    body.fence(stmt, "before")
    with body.maybe_block(guard):
        body.out.line(f"{dtype.c_name} {', '.join(values)};")
        for k, name in enumerate(values):
            with body.out.block(""):
                body.out.line(f"const {lane_type} {var} = {k};")
                value = body.exprs(frame).operand(stmt.value, dtype).text
                body.out.line(f"{name} = {value};")
        with body.out.block(""):
            body.out.line(f"const {lane_type} {var} = 0;")
            place = body.place(stmt.buffer, stmt.indices, frame)
            address = f"&{place.array}[{place.index.text}]"
            old = body.names.get(("atomic_old", stmt), "atomic_old")
            body.out.line(_vector_call(issue, dtype, address, values, old))
    body.fence(stmt, "after")


def _vector_call(issue: AtomicIssue, dtype, address: str, values: list[str],
                 old: str) -> str:
    """The call, or the PTX of four 16-bit lanes (its previous values unused)."""
    if not issue.ptx:
        return (f"{issue.function}(reinterpret_cast<{issue.operand_type}*>({address}), "
                f"{_PACK[issue.operand_type]}({', '.join(values)}));")
    bits = ", ".join(f'"h"({_BITS[dtype.name]}({v}))' for v in values)
    outs = ", ".join(f'"=h"({old}[{k}])' for k in range(4))
    return (f'{{ unsigned short {old}[4]; asm volatile("{issue.function} '
            f'{{%0,%1,%2,%3}}, [%4], {{%5,%6,%7,%8}};" : {outs} : "l"({address}), {bits} '
            f': "memory"); }}')


# ----------------------------------------------------------------------------- CAS loops

# the element's combine in C: the interpreter's monoid (spec.ops) — for floats
# maximumNumber/minimumNumber with +0 > -0, which fmaxf/fminf, fmax/fmin and
# __hmax/__hmin give on sm_90 (docs/decisions.md, "Signed zeros in max and min")
_FLOAT_EXTREMUM = {"float16": ("__hmax", "__hmin"), "bfloat16": ("__hmax", "__hmin"),
                   "float32": ("fmaxf", "fminf"), "float64": ("fmax", "fmin")}
# the element from its word's bits, and back (the bits as an unsigned value of the word)
_DECODE = {"float16": "__ushort_as_half({w})", "bfloat16": "__ushort_as_bfloat16({w})",
           "float32": "__uint_as_float({w})",
           "float64": "__longlong_as_double((long long)({w}))"}
_ENCODE = {"float16": "__half_as_ushort({e})", "bfloat16": "__bfloat16_as_ushort({e})",
           "float32": "__float_as_uint({e})",
           "float64": "(unsigned long long)__double_as_longlong({e})"}


def _combine(op: str, dtype, old: str, value: str) -> str:
    if dtype.is_float:
        fn = _FLOAT_EXTREMUM[dtype.name][0 if op == "max" else 1]
        return f"{fn}({old}, {value})"
    if op == "sum":                 # two's complement: wraps into the dtype, as stored
        return f"({dtype.c_name})({old} + {value})"
    return f"({old} {'>' if op == 'max' else '<'} {value} ? {old} : {value})"


def _render_cas(body, stmt: ir.AtomicUpdate, issue: AtomicIssue, address: str,
                value: str) -> None:
    """The compare-and-swap loop: read the word atomically, combine the element, swap
    until no other thread changed the word in between (a result equal to what the word
    holds needs no swap: max/min idempotent, or an add of 0)."""
    dtype, word = stmt.buffer.dtype, issue.operand_type
    n = {role: body.names.get(("atomic_cas", stmt, role), f"atomic_{role}")
         for role in ("v", "word", "shift", "seen", "old", "want", "got")}
    guard = f"if (rep == {issue.guard_replica})" if issue.guard_replica is not None \
        else ""
    body.fence(stmt, "before")
    with body.out.block(guard):          # a scope of its own for the loop's names
        if issue.fence_before:
            body.out.line("__threadfence();")
        body.out.line(f"const {dtype.c_name} {n['v']} = {value};")
        if issue.subword:
            body.out.line(f"{word}* const {n['word']} = reinterpret_cast<{word}*>("
                          f"reinterpret_cast<size_t>({address}) & ~(size_t)3);")
            body.out.line(f"const unsigned int {n['shift']} = (unsigned int)("
                          f"reinterpret_cast<size_t>({address}) & 3) * 8u;")
            bits = f"(({n['seen']} >> {n['shift']}) & 0xFFu)"
            old = f"({dtype.c_name})({bits})"
            unsigned = "unsigned char" if dtype.kind == "int" else dtype.c_name
            want = (f"({n['seen']} & ~(0xFFu << {n['shift']})) | ((unsigned int)"
                    f"({unsigned})({{e}}) << {n['shift']})")
        else:
            body.out.line(f"{word}* const {n['word']} = reinterpret_cast<{word}*>({address});")
            old = _DECODE[dtype.name].format(w=n["seen"]) if dtype.is_float else \
                f"({dtype.c_name})({n['seen']})"
            want = _ENCODE[dtype.name] if dtype.is_float else f"({word})({{e}})"
        body.out.line(f"{word} {n['seen']} = atomicCAS({n['word']}, ({word})0, ({word})0);")
        with body.out.block("while (true)"):
            body.out.line(f"const {dtype.c_name} {n['old']} = {old};")
            new = _combine(stmt.op, dtype, n["old"], n["v"])
            body.out.line(f"const {word} {n['want']} = {want.format(e=new)};")
            body.out.line(f"if ({n['want']} == {n['seen']}) break;")
            body.out.line(f"const {word} {n['got']} = atomicCAS({n['word']}, {n['seen']}, "
                          f"{n['want']});")
            body.out.line(f"if ({n['got']} == {n['seen']}) break;")
            body.out.line(f"{n['seen']} = {n['got']};")
        if issue.fence_after:
            body.out.line("__threadfence();")
    body.fence(stmt, "after")
