"""A kernel description as TileLang source, and the update sites both the source and the
numpy model (verify.fuzzing.model) are built from: per reducer one site for each update
loop of the epoch (the columns cut at the kernel's splits), holding its loop, cell index,
contribution and guard as generator expressions (verify.fuzzing.expr)."""
from __future__ import annotations

from dataclasses import dataclass

from verify_reducer.verify.fuzzing.expr import Abs, Bin, Cast, Const, Expr, Less, Read, Result, Select, Var
from verify_reducer.verify.fuzzing.grammar import Kernel, Reducer, result_bound
from verify_reducer.verify.fuzzing.user_ops import declarations, op_name

BLOCK_VARS = ("bx", "by", "bz")
IDENTITY_FILL = {"max": "T.min_value(T.{d})", "min": "T.max_value(T.{d})",
                 "product": "1"}
LEGACY_FORMS = {"sum": "+=", "product": "*=", "bitand": "&=", "bitor": "|=",
                "bitxor": "^="}


def block_id(k: Kernel) -> Expr:
    """The block's linear number, x fastest (its offset into every tensor)."""
    blk: Expr = Var("bx")
    stride = k.grid[0]
    for var, extent in zip(BLOCK_VARS[1:], k.grid[1:]):
        blk = Bin("+", Bin("*", Var(var), Const(stride)), blk)
        stride *= extent
    return blk


def _scaled(e: Expr, factor: int) -> Expr:
    return e if factor == 1 else Bin("*", e, Const(factor))


def _plus(a: Expr, b: Expr) -> Expr:
    if isinstance(b, Const) and b.value == 0:
        return a
    if isinstance(a, Const) and a.value == 0:
        return b
    return Bin("+", a, b)


def result_buffer(n: int, r: Reducer) -> str:
    return f"acc{n}" if r.in_place else f"res{n}"


@dataclass(frozen=True)
class Site:
    """One update loop of a reducer: `for loop_vars in T.Parallel(extents)`,
    contribution `value` to cell `index` (one expression per reducer dimension), only
    where `guard` holds (None: everywhere)."""
    loop_vars: tuple[str, ...]
    extents: tuple[int, ...]
    index: tuple[Expr, ...]
    value: Expr
    guard: Expr | None


def parts(k: Kernel) -> list[tuple[int, int]]:
    """The (first column, width) each update loop covers: the epoch's columns cut at
    k.splits, one T.Parallel per part, all feeding the same reducers."""
    bounds = (0, *k.splits, k.cols)
    return [(lo, hi - lo) for lo, hi in zip(bounds, bounds[1:])]


def sites(k: Kernel, n: int) -> tuple[Site, ...]:
    """Reducer n's update loops, one per part of the columns."""
    return tuple(_site(k, n, start, width) for start, width in parts(k))


def _loop(k: Kernel, width: int
          ) -> tuple[tuple[str, ...], tuple[int, ...], Expr, Expr | None]:
    """(loop vars, extents, row, kept cell) of an update loop over width columns; its
    column is `k` (interleaved: `k // rows`, the row `k % rows`)."""
    if k.interleave and k.rows > 1:
        return ("k",), (k.rows * width,), Bin("%", Var("k"), Const(k.rows)), None
    names, extents = ["k"], [width]
    kept = None
    if k.kept:
        names.insert(0, "c")
        extents.insert(0, k.kept)
        kept = Var("c")
    if k.rows > 1:
        names.insert(0, "i")
        extents.insert(0, k.rows)
    row = Var("i") if k.rows > 1 else Const(0)
    return tuple(names), tuple(extents), row, kept


def _site(k: Kernel, n: int, start: int, width: int) -> Site:
    r = k.reducers[n]
    loop_vars, extents, row, kept = _loop(k, width)
    col = Bin("//", Var("k"), Const(k.rows)) if k.interleave and k.rows > 1 else Var("k")
    col = _plus(col, Const(start))
    # a 2-D reducer's cell (i, c) reduces its own group of columns, c-major in the input
    group = _scaled(kept, k.cols if k.mode != "direct" else k.valid) if kept else Const(0)
    blk = block_id(k)
    a = f"a{n}"
    if k.mode == "direct":
        gcol = _plus(group, col)
        read = Read(a, (_plus(_scaled(blk, k.rows), row), gcol), a,
                    (_plus(_scaled(blk, k.rows), row), gcol), r.magnitude)
        wread = Read(f"w{n}", (col,), f"w{n}", (col,), r.magnitude)
    elif k.mode == "staged":
        read = Read(f"{a}_frag", (row, _plus(group, col)), a,
                    (_plus(_scaled(blk, k.rows), row), _plus(group, col)), r.magnitude)
        wread = Read(f"w{n}_frag", (col,), f"w{n}", (col,), r.magnitude)
    elif k.mode == "pipelined":
        gcol = _plus(_scaled(Var("ko"), k.cols), col)
        loaded = _column_guard(k, gcol) if k.tail else None    # padding reads as 0
        read = Read(f"{a}_frag", (row, col), a, (_plus(_scaled(blk, k.rows), row), gcol),
                    r.magnitude, loaded)
        wread = Read(f"w{n}_frag", (col,), f"w{n}", (gcol,), r.magnitude, loaded)
    else:   # serial: the epoch's row of a fragment that holds every epoch
        flat = _plus(_scaled(row, k.cols), col) if k.rows > 1 else col
        read = Read(f"{a}_frag", (Var("it"), flat), a,
                    (_plus(_scaled(blk, k.tiles), Var("it")), flat), r.magnitude)
        wread = read
    cell = (row,) if kept is None else (row, kept)
    value = _value(k, r, read, wread, cell)
    guard = None
    if r.predicate is not None:
        cond = _column_guard(k, gcol) if k.mode == "pipelined" else Less(col, Const(k.valid))
        if r.predicate == "select":
            value = Select(cond, value, Const(0))
        else:
            guard = cond
    return Site(loop_vars, extents, cell, value, guard)


def _column_guard(k: Kernel, gcol: Expr) -> Expr:
    """Whether a pipelined tile's column exists (K = tiles * cols - tail)."""
    return Less(gcol, Const(k.tiles * k.cols - k.tail))


def _cast(e: Expr, src: str, dst: str) -> Expr:
    return e if src == dst else Cast(e, dst)


def _value(k: Kernel, r: Reducer, read: Read, wread: Read, cell: tuple[Expr, ...]) -> Expr:
    x = _cast(read, r.in_dtype, r.dtype)
    if r.value == "abs":
        return Abs(x)
    if r.value == "plus1":
        return Bin("+", x, Const(1))
    if r.value == "gemv":
        return Bin("*", x, _cast(wread, r.in_dtype, r.dtype))
    if r.value == "consume":
        src = k.reducers[r.consumes]
        return Bin("-", x, Result(result_buffer(r.consumes, src), cell, f"r{r.consumes}",
                                  result_bound(k, src)))
    return x


# ----------------------------------------------------------------------------- source

def render(k: Kernel) -> str:
    """The kernel as a TileLang program (its `# expect:` header is the caller's)."""
    params = []
    for n, r in enumerate(k.reducers):
        params.append(f"    a{n}: T.Tensor({_shape(input_shape(k))}, T.{r.in_dtype}),")
        if r.value == "gemv":
            params.append(f"    w{n}: T.Tensor({_shape(vector_shape(k))}, T.{r.in_dtype}),")
    for n, r in enumerate(k.reducers):
        params.append(f"    o{n}: T.Tensor({_shape(output_shape(k))}, T.{r.dtype}),")
    names = BLOCK_VARS[:len(k.grid)]
    bound = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
    launch = ", ".join(map(str, k.grid))
    decls = [line for text in declarations(k) for line in ["", "", *text.splitlines()]]
    lines = ["import tilelang.language as T", *decls, "", "", "@T.prim_func", "def main(",
             *params,
             "):", f"    with T.Kernel({launch}, threads={k.threads}) as {bound}:"]
    pad = "        "
    if _producer_stages(k):
        for n in range(len(k.reducers)):
            lines += [pad + line for line in _shared_allocs(k, n)]
        lines += [pad + line for line in ["with T.ws(0):", *_producer(k)]]
    if k.ws:
        lines.append(pad + "with T.ws(1):")
        pad += "    "
    lines += [pad + line for line in _body(k)]
    return "\n".join(lines) + "\n"


def _shape(dims) -> str:
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def input_shape(k: Kernel) -> tuple[int, ...]:
    if k.mode == "serial":
        return (k.blocks * k.tiles, k.rows * k.cols)
    return (k.blocks * k.rows, max(k.kept, 1) * _width(k))


def vector_shape(k: Kernel) -> tuple[int, ...]:
    return (_width(k),)


def _width(k: Kernel) -> int:
    return k.valid if k.mode == "direct" else k.cols * k.tiles - k.tail


def output_shape(k: Kernel) -> tuple[int, ...]:
    if k.mode == "serial":
        return (k.blocks * k.tiles, k.rows)
    return (k.blocks * k.rows,) + ((k.kept,) if k.kept else ())


def _body(k: Kernel) -> list[str]:
    producers = [n for n, r in enumerate(k.reducers) if r.consumes is None]
    consumers = [n for n, r in enumerate(k.reducers) if r.consumes is not None]
    out: list[str] = []
    for n in producers:
        out += _staging_allocs(k, n)
    for n in producers:
        out += _alloc(k, n)
        if k.mode != "serial":
            out += _init(k, n)
    if k.mode == "staged" or k.mode == "serial":
        for n in producers:
            out += _stage_copies(k, n)
    if k.mode == "pipelined":
        out.append(f"for ko in T.Pipelined({k.tiles}, num_stages=2):")
        for n in producers:
            out += ["    " + s for s in _stage_copies(k, n)]
        out += ["    " + s for s in _loops(k, producers)]
    elif k.mode == "serial":
        out.append(f"for it in T.serial({k.tiles}):")
        inner = []
        for n in producers:
            inner += _init(k, n)
        inner += _loops(k, producers)
        for n in producers:
            inner += _finalize(k, n)
        out += ["    " + s for s in inner]
        return out
    else:
        out += _loops(k, producers)
    for n in producers:
        out += _finalize(k, n)
    for n in consumers:
        out += _staging_allocs(k, n) + _alloc(k, n) + _init(k, n)
        if k.mode == "staged":
            out += _stage_copies(k, n)
        out += _loops(k, [n])
        out += _finalize(k, n)
    return out


def _producer_stages(k: Kernel) -> bool:
    """A staged kernel in a warp group stages through shared memory: the producer group
    (`T.ws(0)`) copies global to shared, the consumer group (`T.ws(1)`) runs the rest."""
    return k.ws and k.mode == "staged"


def _tile(k: Kernel) -> tuple[int, ...]:
    return (k.tiles, k.rows * k.cols) if k.mode == "serial" else \
        (k.rows, max(k.kept, 1) * k.cols)


def _shared_allocs(k: Kernel, n: int) -> list[str]:
    r = k.reducers[n]
    out = [f"a{n}_shared = T.alloc_shared({_shape(_tile(k))}, T.{r.in_dtype})"]
    if r.value == "gemv":
        out.append(f"w{n}_shared = T.alloc_shared(({k.cols},), T.{r.in_dtype})")
    return out


def _staging_allocs(k: Kernel, n: int) -> list[str]:
    r = k.reducers[n]
    if k.mode == "direct":
        return []
    out = []
    if k.mode == "pipelined" and not k.tail:
        out += _shared_allocs(k, n)[:1]
    out.append(f"a{n}_frag = T.alloc_fragment({_shape(_tile(k))}, T.{r.in_dtype})")
    if r.value == "gemv":
        out.append(f"w{n}_frag = T.alloc_fragment(({k.cols},), T.{r.in_dtype})")
    return out


def _global_rows(k: Kernel) -> str:
    return _scaled(block_id(k), k.tiles if k.mode == "serial" else k.rows).text()


def _stage_copies(k: Kernel, n: int) -> list[str]:
    r = k.reducers[n]
    gemv = r.value == "gemv"
    if _producer_stages(k):
        return [f"T.copy(a{n}_shared, a{n}_frag)"] + \
            ([f"T.copy(w{n}_shared, w{n}_frag)"] if gemv else [])
    if k.mode == "pipelined" and k.tail:
        return _guarded_loads(k, n)
    rows = _global_rows(k)
    col = f"ko * {k.cols}" if k.mode == "pipelined" else "0"
    out = []
    if k.mode == "pipelined":
        out.append(f"T.copy(a{n}[{rows}, {col}], a{n}_shared)")
        out.append(f"T.copy(a{n}_shared, a{n}_frag)")
    else:
        out.append(f"T.copy(a{n}[{rows}, {col}], a{n}_frag)")
    if gemv:
        out.append(f"T.copy(w{n}[{col}], w{n}_frag)")
    return out


def _guarded_loads(k: Kernel, n: int) -> list[str]:
    """A tile that may run past K, loaded as TileLang's GEMV examples load it: the
    matrix with T.if_then_else, the vector with an if/else statement, zero outside."""
    r = k.reducers[n]
    gcol = f"ko * {k.cols} + k"
    limit = k.tiles * k.cols - k.tail
    zero = f"T.cast(0, T.{r.in_dtype})"
    if k.rows > 1:
        head, row, frag = f"for i, k in T.Parallel({k.rows}, {k.cols}):", \
            f"{_global_rows(k)} + i", f"a{n}_frag[i, k]"
    else:
        head, row, frag = f"for k in T.Parallel({k.cols}):", _global_rows(k), \
            f"a{n}_frag[0, k]"
    out = [head, f"    {frag} = T.if_then_else({gcol} < {limit}, a{n}[{row}, {gcol}], {zero})"]
    if r.value == "gemv":
        out += [f"for k in T.Parallel({k.cols}):", f"    if {gcol} < {limit}:",
                f"        w{n}_frag[k] = w{n}[{gcol}]", "    else:",
                f"        w{n}_frag[k] = {zero}"]
    return out


def _producer(k: Kernel) -> list[str]:
    out = []
    for n, r in enumerate(k.reducers):
        out.append(f"    T.copy(a{n}[{_global_rows(k)}, 0], a{n}_shared)")
        if r.value == "gemv":
            out.append(f"    T.copy(w{n}[0], w{n}_shared)")
    return out


def _alloc(k: Kernel, n: int) -> list[str]:
    r = k.reducers[n]
    extra = ', replication="all"' if r.surface == "legacy" else ""
    shape = _shape(k.reducer_shape)
    if r.user_op is not None:
        op = op_name(r)
    else:
        op = f'"{r.op}"'
    out = [f'acc{n} = T.alloc_reducer({shape}, T.{r.dtype}, op={op}{extra})']
    if not r.in_place:
        out.append(f"res{n} = T.alloc_fragment({shape}, T.{r.dtype})")
    return out


def _init(k: Kernel, n: int) -> list[str]:
    r = k.reducers[n]
    if r.surface == "rfc":
        return []             # the allocation opens the RFC surface's epoch
    if r.surface == "v2":
        return [f"T.reducer_init(acc{n}{'' if r.seed is None else f', {r.seed}'})"]
    if r.op in IDENTITY_FILL:
        return [f"T.fill(acc{n}, {IDENTITY_FILL[r.op].format(d=r.dtype)})"]
    if r.op == "bitand":
        return [f"T.fill(acc{n}, {-1 if r.dtype == 'int32' else 2 ** 32 - 1})"]
    return [f"T.clear(acc{n})"]


def _loops(k: Kernel, reducers: list[int]) -> list[str]:
    """The epoch's update loops: each part of the columns in turn, and in each part one
    loop per reducer (fused: one loop for all of them)."""
    groups = [reducers] if k.fused else [[n] for n in reducers]
    out = []
    for part in range(len(parts(k))):
        for group in groups:
            out += _loop_text(k, group, part)
    return out


def _loop_text(k: Kernel, group: list[int], part: int) -> list[str]:
    head = sites(k, group[0])[part]
    out = [f"for {', '.join(head.loop_vars)} in T.Parallel("
           f"{', '.join(map(str, head.extents))}):"]
    for n in group:
        s = sites(k, n)[part]
        update = _update(k.reducers[n], n, s)
        if s.guard is not None:
            out += [f"    if {s.guard.text()}:", f"        {update}"]
        else:
            out.append(f"    {update}")
    return out


def _update(r: Reducer, n: int, s: Site) -> str:
    idx, value = ", ".join(i.text() for i in s.index), s.value.text()
    if r.surface == "v2":
        return f"T.reducer_update(acc{n}[{idx}], {value})"
    if r.surface == "rfc":
        return f"T.reducer_update(acc{n}, ({idx}{',' * (len(s.index) == 1)}), {value})"
    if r.op in LEGACY_FORMS:
        return f"acc{n}[{idx}] {LEGACY_FORMS[r.op]} {value}"
    return f"acc{n}[{idx}] = T.{r.op}(acc{n}[{idx}], {value})"


def _finalize(k: Kernel, n: int) -> list[str]:
    r = k.reducers[n]
    batch = "" if r.batch is None else f", batch={r.batch}"
    src = result_buffer(n, r)
    dst = "" if r.in_place else f", {src}"
    out = [f"T.finalize_reducer(acc{n}{dst}{batch})"]
    if k.mode == "serial":
        row = _plus(_scaled(block_id(k), k.tiles), Var("it")).text()
        if r.output == "copy":
            out.append(f"T.copy({src}, o{n}[{row}, 0:{k.rows}])")
        else:
            out += [f"for i in T.Parallel({k.rows}):", f"    o{n}[{row}, i] = {src}[i]"]
        return out
    base = _scaled(block_id(k), k.rows).text()
    if r.output == "copy":
        out.append(f"T.copy({src}, o{n}[{base}{', 0' if k.kept else ''}])")
    elif k.kept:
        out += [f"for i, c in T.Parallel({k.rows}, {k.kept}):",
                f"    o{n}[{base} + i, c] = {src}[i, c]"]
    else:
        out += [f"for i in T.Parallel({k.rows}):", f"    o{n}[{base} + i] = {src}[i]"]
    return out
