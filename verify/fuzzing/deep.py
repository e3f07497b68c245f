"""Deep programs for the robustness campaign: valid-looking kernels pushed up to and past
each documented limit (docs/limits.md; the numbers in spec/limits.py) — expression and
statement nesting, long flat expressions, many statements, many update sites, serial
trip counts, grid extents, T.Parallel extents and reducer sizes. The tool must answer
each one (exit 0–3 or 5, inconclusive) within the campaign's slow threshold (20 s):
a limit is refused with its number, never reached by a hang or a memory kill.

The list is fixed (no randomness): program k is the same everywhere, named for what it
pushes and how far ("expr_depth_65")."""
from __future__ import annotations

from dataclasses import dataclass

from verify_reducer.spec import limits


@dataclass(frozen=True)
class Deep:
    name: str           # what is pushed and how far
    source: bytes


def _kernel(body: str, *, n: int = 8, grid: str = "1", threads: int = 128,
            reducer: int = 1, header: str = "") -> str:
    """A sum over x into out, with `body` (indented 8 spaces, may use x_frag, acc, j)
    between the reducer's init and its finalize."""
    return (f"{header}import tilelang.language as T\n\n\n"
            f"@T.prim_func\n"
            f"def main(x: T.Tensor(({n},), T.float32), out: T.Tensor(({reducer},), T.float32)):\n"
            f"    with T.Kernel({grid}, threads={threads}) as bx:\n"
            f"        x_frag = T.alloc_fragment(({n},), T.float32)\n"
            f"        T.copy(x, x_frag)\n"
            f"        acc = T.alloc_reducer(({reducer},), T.float32, op=\"sum\")\n"
            f"        T.reducer_init(acc)\n"
            f"{body}"
            f"        res = T.alloc_fragment(({reducer},), T.float32)\n"
            f"        T.finalize_reducer(acc, res)\n"
            f"        T.copy(res, out)\n")


def _update(value: str, indent: int = 12) -> str:
    return f"{' ' * indent}T.reducer_update(acc[0], {value})\n"


def _loop(inner: str) -> str:
    return "        for j in T.Parallel(8):\n" + inner


def expr_depth(depth: int) -> Deep:
    """x_frag[j] under `depth` nested additions, (((x + 0.0) + 0.0) ...) — each level an
    operator in the source."""
    value = "(" * depth + "x_frag[j]" + " + 0.0)" * depth
    return Deep(f"expr_depth_{depth}", _kernel(_loop(_update(value))).encode())


def parens(depth: int) -> Deep:
    """Redundant parentheses: not nesting in the AST, but in the parser."""
    value = "(" * depth + "x_frag[j]" + ")" * depth
    return Deep(f"parens_{depth}", _kernel(_loop(_update(value))).encode())


def flat_sum(terms: int) -> Deep:
    """A flat `a + a + ... + a` of `terms` operands: a left-leaning tree `terms` deep."""
    value = " + ".join(["x_frag[j]"] * terms)
    return Deep(f"flat_sum_{terms}", _kernel(_loop(_update(value))).encode())


def flat_and(terms: int) -> Deep:
    """A flat `and` chain (one BoolOp, a balanced tree of depth log2 n in the IR)."""
    cond = " and ".join(["x_frag[j] > -1.0"] * terms)
    body = _loop(f"            if {cond}:\n" + _update("x_frag[j]", 16))
    return Deep(f"flat_and_{terms}", _kernel(body).encode())


def stmt_depth(depth: int, head: str) -> Deep:
    """An update under `depth` nested statements (`if` or serial loops) inside the
    kernel body (itself level 1)."""
    lines = ""
    for level in range(depth):
        lines += " " * (8 + 4 * level) + head.format(level=level) + "\n"
    lines += _update("x[0]", 8 + 4 * depth)
    kind = "if" if head.startswith("if") else "serial"
    return Deep(f"stmt_depth_{kind}_{depth}", _kernel(lines).encode())


def let_chain(statements: int) -> Deep:
    """`statements` Let bindings, each on the one before (t1 = t0 + 1.0, ...)."""
    lines = "            t0 = x_frag[j]\n" + "".join(
        f"            t{k} = t{k - 1} + 1.0\n" for k in range(1, statements))
    body = _loop(lines + _update(f"t{statements - 1}"))
    return Deep(f"let_chain_{statements}", _kernel(body).encode())


def update_sites(sites: int) -> Deep:
    """`sites` update statements of one reducer in one parallel loop."""
    body = _loop("".join(_update("x_frag[j]") for _ in range(sites)))
    return Deep(f"update_sites_{sites}", _kernel(body).encode())


def update_loops(loops: int) -> Deep:
    """`loops` parallel loops, one update site each (a layout per loop)."""
    body = "".join(_loop(_update("x_frag[j]")) for _ in range(loops))
    return Deep(f"update_loops_{loops}", _kernel(body).encode())


def serial_trips(trips: int) -> Deep:
    body = f"        for k in T.serial({trips}):\n" + _update("x[k % 8]")
    return Deep(f"serial_{trips}", _kernel(body).encode())


def runtime_trips(trips: int) -> Deep:
    """A serial loop whose trip count is read at run time (an input), `trips` given."""
    source = _kernel(f"        for k in T.serial(n[0]):\n" + _update("x[k % 8]"),
                     header=f"# input: n=[{trips}]\n")
    source = source.replace("out: T.Tensor((1,), T.float32)):",
                            "out: T.Tensor((1,), T.float32), n: T.Tensor((1,), T.int32)):")
    return Deep(f"runtime_serial_{trips}", source.encode())


def grid(blocks: int) -> Deep:
    """`blocks` blocks, each adding its sum into out[0] atomically (the others write
    all of out, which from several blocks is a race: R504 before anything runs). They
    meet only through the atomic, so `check` samples them; `run` and `check --blocks
    all` execute every block."""
    body = _loop(_update("x_frag[j]"))
    source = _kernel(body, grid=str(blocks)).replace(
        "        T.copy(res, out)\n", "        T.atomic_add(out[0], res[0])\n")
    return Deep(f"grid_{blocks}", source.encode())


def parallel_extent(extent: int, threads: int = 1024) -> Deep:
    body = (f"        for i in T.Parallel({extent}):\n"
            f"            T.reducer_update(acc[0], x_frag[i % 8])\n")
    return Deep(f"parallel_{extent}_on_{threads}", _kernel(body, threads=threads).encode())


def reducer_size(elements: int) -> Deep:
    body = _loop("            T.reducer_update(acc[j], x_frag[j])\n")
    return Deep(f"reducer_{elements}", _kernel(body, reducer=elements).encode())


def tensor_size(elements: int) -> Deep:
    """An input tensor of `elements` (one block reads 8 of them)."""
    body = _loop(_update("x_frag[j]"))
    source = _kernel(body).replace("x: T.Tensor((8,)", f"x: T.Tensor(({elements},)") \
        .replace("T.copy(x, x_frag)", "T.copy(x[0:8], x_frag)")
    return Deep(f"tensor_{elements}", source.encode())


def deep_programs() -> list[Deep]:
    """Every deep program: each limit at, one past, and far past its number."""
    # the limits are read when the list is built: a limit that moves moves its programs
    e, s, it = limits.MAX_EXPR_DEPTH, limits.MAX_STMT_DEPTH, limits.MAX_ITERATIONS
    blocks, elements = limits.MAX_BLOCKS, limits.MAX_ELEMENTS
    lanes = getattr(limits, "MAX_LANES", elements)
    programs = [expr_depth(d) for d in (e - 4, e - 1, e, e + 1, 2 * e, 180)]
    programs += [parens(d) for d in (50, 150, 199, 250, 1000)]
    programs += [flat_sum(n) for n in (e, e + 2, 500, 5000)]
    programs += [flat_and(n) for n in (100, 400, 5000)]
    for head in ("if x[0] > -{level}.0:", "for i{level} in T.serial(1):"):
        programs += [stmt_depth(d, head) for d in (s - 2, s - 1, s, s + 1, 90, 120)]
    programs += [let_chain(n) for n in (100, 1000, 5000, 20000)]
    programs += [update_sites(n) for n in (10, 100, 300, 1000)]
    programs += [update_loops(n) for n in (50, 300)]
    # (2**20 serial iterations and grids of 2**28 blocks were hangs, issue 24)
    programs += [serial_trips(n) for n in sorted({it // 4, it, it + 1, 2**20, 2**31 - 1})]
    programs += [runtime_trips(n) for n in sorted({1000, it, it + 1, 2**20, 2**31 - 1})]
    programs += [grid(n) for n in (blocks, blocks + 1, 2**28, 2**31 - 1, 2**31)]
    programs += [parallel_extent(n) for n in sorted({lanes, lanes + 1, 2**20, elements,
                                                     elements + 1})]
    programs += [reducer_size(n) for n in sorted({10**6, 10**7, lanes + 1, elements,
                                                  elements + 1})]
    programs += [tensor_size(n) for n in (2**30, 2**40, 2**40 + 1)]
    return programs
