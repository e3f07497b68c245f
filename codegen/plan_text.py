"""The physical plan as text (`verify-reducer emit --what plan`) and as plain JSON
(`--json`): one block per reducer — planner, participants, storage layout, each update
site with its loop layout and guard, each finalize with its chunks and their steps one
per line, the workspace size and the notes; then the kernel's resources (every shared
array at its offset, the register estimate, threads, grid, the target limits used) and,
when given, ptxas's own figures (codegen.ptxas)."""
from __future__ import annotations

from verify_reducer.spec.physical import Barrier, FinalizePlan, FromWorkspace, Guard, PhysicalPlan, Pipeline, \
    ReduceWorkspace, ReducerPlan, Resources, Shuffle, SitePlan, Step, ToWorkspace
from verify_reducer.spec.target import target as target_named
from .plan_raster import describe as describe_raster
from .resources import kib


# ----------------------------------------------------------------------------- text

def format_plan(plan: PhysicalPlan, ptxas=None) -> str:
    """The plan as text; ptxas: the kernel's codegen.ptxas.PtxasFigures, to append."""
    head = f"physical plan of {plan.func.name}: planner {plan.planner}"
    if not plan.reducers:
        head += "\n  (no reducers: ordinary work follows the layouts)"
    blocks = [head] + [_reducer_text(r) for r in plan.reducers]
    if plan.pipelines:
        blocks.append("\n".join(pipeline_text(p) for p in plan.pipelines))
    if plan.pitches:
        blocks.append("shared rows padded (codegen.plan_pitch): " + ", ".join(
            f"{b.name} {p} elements a row ({b.shape[1]} + {p - b.shape[1]})"
            for b, p in plan.pitches))
    if plan.swizzles:
        blocks.append("shared operands swizzled for wgmma (codegen.plan_swizzle): " +
                      ", ".join(f"{b.name} {z.describe()}" for b, z in plan.swizzles))
    if plan.raster is not None:
        blocks.append(describe_raster(plan.raster))
    elif plan.raster_why:
        blocks.append(plan.raster_why)
    if plan.barriers.items:
        blocks.append("\n".join(barriers_text(plan)))
    if plan.resources is not None:
        blocks.append("\n".join(resources_text(plan.resources, ptxas)))
    blocks += [f"{d.severity}[{d.code}]: {d.message}" for d in plan.notes]
    return "\n\n".join(blocks)


def barriers_text(plan: PhysicalPlan) -> list[str]:
    """The kernel body's barriers (spec.physical.BodyBarriers), one line each, in
    program order: where, which, over which threads, and what it orders."""
    lines = [f"barriers of the kernel body: {len(plan.barriers.items)}"]
    for b in plan.barriers.items:
        offset, count = b.participants
        which = "__syncthreads" if b.id == 0 else \
            "no named barrier left" if b.id is None else \
            f"named barrier {b.id} ({b.arrivals} arrivals)"
        if b.async_proxy:
            which = "fence.proxy.async, " + which
        what = type(b.stmt).__name__
        lines.append(f"  line {b.stmt.span.line} {what}, {b.where}: {which}, threads "
                     f"{offset}..{offset + count - 1}: {b.why.replace('{rows}', 'its rows')}")
    for loop in plan.one_writer_loops:
        lines.append(f"  line {loop.span.line} T.Parallel: replica 0 alone runs the body "
                     f"(it updates shared memory)")
    return lines


def pipeline_text(pipe: Pipeline) -> str:
    return (f"T.Pipelined at line {pipe.loop.span.line} (num_stages={pipe.stages}): "
            + pipeline_summary(pipe))


def pipeline_summary(pipe: Pipeline) -> str:
    if not pipe.active:
        return f"a plain loop ({pipe.plain})"
    parts = []
    if not pipe.copies:
        what = "global -> shared copy staged" if pipe.issues else "cp.async stages"
        parts.append(f"no {what} ({pipe.plain})")
    if pipe.issues:
        when = "" if pipe.refill_after is None else \
            f" into it once line {pipe.refill_after.span.line} has read it"
        order = f"waits with {pipe.pending} group(s) in flight, then issues iteration " \
            f"i + {pipe.ahead} after the landed barrier (which releases stage i - 1)" \
            if pipe.refill_at_landed else f"issues iteration i + {pipe.ahead}{when}, " \
            f"waits with {pipe.pending} group(s) in flight"
        parts.append(f"a {pipe.stages}-stage cp.async pipeline of {_copies(pipe.issues)}; "
                     f"iteration i reads stage i % {pipe.stages}, {order}")
    if pipe.staged_reads:
        parts.append(", ".join(f"line {s.copy.span.line} {s.copy.dst.buffer.name} read from "
                               f"the stage of {s.buffer.name}" for s in pipe.staged_reads))
    if pipe.prefetched:
        parts.append(f"{_copies(pipe.prefetched)} prefetched one iteration ahead into "
                     f"registers")
    return "; ".join(parts)


def _copies(copies) -> str:
    return ", ".join(f"line {c.span.line} {c.src.buffer.name} -> {c.dst.buffer.name}"
                     for c in copies)


def resources_text(res: Resources, ptxas=None) -> list[str]:
    limits = target_named(res.target)
    kind = "dynamic: one extern buffer, launched with that many bytes" if res.dynamic \
        else f"static: at most {kib(limits.static_shared_bytes)}"
    grid = "×".join(str(g) for g in res.grid)
    lines = [f"resources on {res.target}: {res.threads} threads per block (at most "
             f"{limits.threads_per_block}), grid {grid}",
             f"  shared memory: {res.shared_bytes} bytes ({kind}; at most "
             f"{kib(limits.dynamic_shared_bytes)} per block)"]
    lines += [f"    {a.name}: {a.what}, {a.elements} × {a.dtype}, {a.bytes} bytes at "
              f"offset {a.offset}" for a in res.shared]
    parts = ", ".join(f"{r.name} {r.words}" + (" (seed)" if r.what == "reducer seed" else "")
                      for r in res.registers)
    lines.append(f"  registers: about {res.register_words} per thread (budget "
                 f"{res.register_budget}){': ' + parts if parts else ''}")
    if res.occupancy is not None:
        lines.append(occupancy_text(res))
    if ptxas is not None:
        from .ptxas import figures_text
        lines += figures_text(ptxas)
    return lines


def occupancy_text(res: Resources) -> str:
    occ = res.occupancy
    held = "" if occ.min_blocks is None else \
        f"; registers held to {occ.min_blocks} blocks per SM (__launch_bounds__)"
    if occ.cap is None:
        return f"  occupancy: {occ.resident} block(s) per SM ({occ.reason}){held}"
    return (f"  occupancy: at most {occ.cap} blocks per SM ({occ.reason}): every launch "
            f"asks for {occ.launch_shared_bytes} bytes of dynamic shared memory, "
            f"{occ.launch_shared_bytes - res.dynamic_shared_bytes} of them padding{held}")


def _reducer_text(rp: ReducerPlan) -> str:
    buffer = rp.reducer
    op = buffer.reducer.op
    offset, count = rp.participants
    lines = [f"reducer {buffer.name}{list(buffer.shape)} {buffer.dtype} op={op} "
             f"(line {buffer.span.line}): {rp.planner} plan",
             f"  participants: threads {offset}..{offset + count - 1} ({count})",
             f"  storage: {rp.storage.describe()}"]
    lines += [_site_text(site) for site in rp.sites]
    for fp in rp.finalizes:
        lines += _finalize_text(fp, op)
    bytes_ = rp.workspace_words * max(1, buffer.dtype.bits // 8)
    lines.append(f"  workspace: {rp.workspace_words} words ({bytes_} bytes)")
    lines += [f"  note[{d.code}]: {d.message}" for d in rp.notes]
    return "\n".join(lines)


def _site_text(site: SitePlan) -> str:
    guard = "every replica contributes" if site.guard_replica is None else \
        f"only replica {site.guard_replica} contributes ({site.loop.rep_var} == " \
        f"{site.guard_replica})"
    return (f"  update line {site.update.span.line}: loop {site.loop.describe()}; "
            f"{guard}")


def _finalize_text(fp: FinalizePlan, op: str) -> list[str]:
    fin = fp.finalize
    dst = fin.dst.name if fin.dst is not None else "in place"
    lines = [f"  finalize line {fin.span.line} -> {dst}: all-reduce width {fp.width}, "
             f"scale {fp.scale}, barrier {fp.barrier_id} (count {fp.barrier_count}), "
             f"{len(fp.chunks)} chunk{'s' if len(fp.chunks) != 1 else ''}"]
    if fin.batch is not None:
        lines.append(f"    {_batch_text(fp)}")
    if fp.dst_layout is not None:
        lines.append(f"    destination layout: {fp.dst_layout.describe()}")
    for chunk in fp.chunks:
        lines.append(f"    chunk slots {chunk.first}..{chunk.first + chunk.count - 1}:")
        lines += [f"      {step_text(step, op)}" for step in chunk.steps] or \
            ["      (nothing to combine: one partial per output)"]
    if fp.publish is not None:
        lines.append(f"    publication into the destination: {publish_text(fp, op)}")
        lines.append(f"      {step_text(fp.publish.barrier, op)}")
    return lines


def publish_text(fp: FinalizePlan, op: str = "⊕") -> str:
    """`out[i] = sum over k < 2 of W[16*(2*(i % 2) + k) + i // 2]` for every holder."""
    pub = fp.publish
    ix = ", ".join(pub.index_vars)
    where = "every holder in its layout" if fp.finalize.dst is not None and \
        fp.finalize.dst.scope == "fragment" else \
        "every copy of the storage" if fp.finalize.dst is None else "storage replica 0"
    read = f"W[{pub.addr}]" if pub.terms == 1 else \
        f"{op} over term < {pub.terms} of W[{pub.addr}]"
    return f"[{ix}] = {read} ({where})"


def _batch_text(fp: FinalizePlan) -> str:
    hint = fp.finalize.batch
    slots = sum(c.count for c in fp.chunks)
    size = fp.chunks[0].count
    if fp.publish is not None:
        return (f"batch hint {hint}: not needed (the segmented finalize stores each lane "
                f"group's {slots} slots once, in one pass) — a hint never changes the result")
    if not any(isinstance(s, (ToWorkspace, ReduceWorkspace)) for c in fp.chunks
               for s in c.steps):
        return f"batch hint {hint}: not needed (no workspace; one pass over {slots} slots)"
    if hint >= 1 and size == min(hint, slots):
        return f"batch hint {hint}: chunks of {size} slots"
    return (f"batch hint {hint} not usable here (participants or workspace); chunks of "
            f"{size} slots instead — a hint never changes the result")


def step_text(step: Step, op: str = "⊕") -> str:
    """One step as a line: `shfl_xor 16`, `bar.sync 1, 128`, `W[t*4 + s] = P[t, s]`."""
    if isinstance(step, Shuffle):
        text = f"shfl_xor {step.mask}: P[t, s] = {op}(P[t, s], P[t ^ {step.mask}, s])"
    elif isinstance(step, Barrier):
        text = f"bar.sync {step.id}, {step.arrivals}"
        if step.arrivals != step.count:             # a partial warp arrives as a whole one
            text += f" ({step.count} threads)"
    elif isinstance(step, ToWorkspace):
        text = f"W[{step.addr}] = P[t, s]"
    elif isinstance(step, ReduceWorkspace):
        text = f"W[{step.dst}] = {op} over k < {step.terms} of W[{step.src}]"
    elif isinstance(step, FromWorkspace):
        text = f"P[t, s] = W[{step.addr}]" if step.terms == 1 else \
            f"P[t, s] = {op} over k < {step.terms} of W[{step.addr}]"
    else:
        raise TypeError(f"not a step: {step!r}")
    if step.guards:
        text += "  if " + " and ".join(_guard_text(g) for g in step.guards)
    if isinstance(step, ReduceWorkspace):
        text += "  (once per thread, not per slot)"
    return text


def _guard_text(guard: Guard) -> str:
    return f"{guard.expr} {guard.op} {guard.value}"


# ----------------------------------------------------------------------------- JSON

def plan_json(plan: PhysicalPlan, ptxas=None) -> dict:
    doc = {
        "func": plan.func.name,
        "planner": plan.planner,
        "reducers": [_reducer_json(r) for r in plan.reducers],
        "pipelines": [_pipeline_json(p) for p in plan.pipelines],
        "pitches": [{"buffer": b.name, "row": b.shape[1], "pitch": p}
                    for b, p in plan.pitches],
        "swizzles": [{"buffer": b.name, "width": z.width, "chunks": b.shape[1] // z.chunk_cols}
                     for b, z in plan.swizzles],
        "raster": {"applied": None if plan.raster is None else {
            "order": plan.raster.order, "panel": plan.raster.panel,
            "line": plan.raster.span.line}, "why": plan.raster_why},
        "barriers": [_barrier_json(b) for b in plan.barriers.items],
        "resources": resources_json(plan.resources) if plan.resources else None,
        "notes": [d.to_json() for d in plan.notes],
    }
    if ptxas is not None:
        doc["ptxas"] = ptxas.to_json()
    return doc


def _pipeline_json(pipe: Pipeline) -> dict:
    return {"line": pipe.loop.span.line, "stages": pipe.stages, "ahead": pipe.ahead,
            "pending": pipe.pending,
            "refill_after": pipe.refill_after and pipe.refill_after.span.line,
            "refill_at_landed": pipe.refill_at_landed,
            "copies": _copies_json(pipe.copies),
            "prefetched": _copies_json(pipe.prefetched),
            "staged_reads": [{"line": s.copy.span.line, "src": s.copy.src.buffer.name,
                              "dst": s.copy.dst.buffer.name, "buffer": s.buffer.name,
                              "elements": s.buffer.size} for s in pipe.staged_reads],
            "plain": pipe.plain or None}


def _barrier_json(b) -> dict:
    """One barrier of the kernel body (codegen.plan_barriers), as barriers_text prints
    it: id 0 is __syncthreads, 1..15 a named barrier, None none left."""
    offset, count = b.participants
    return {"line": b.stmt.span.line, "statement": type(b.stmt).__name__,
            "where": b.where, "participants": {"offset": offset, "count": count},
            "id": b.id, "arrivals": b.arrivals,
            "why": b.why.replace("{rows}", "its rows"), "async_proxy": b.async_proxy}


def _copies_json(copies) -> list[dict]:
    return [{"line": c.span.line, "src": c.src.buffer.name, "dst": c.dst.buffer.name}
            for c in copies]


def resources_json(res: Resources) -> dict:
    return {
        "target": res.target,
        "threads": res.threads,
        "grid": list(res.grid),
        "shared": [{"name": a.name, "what": a.what, "dtype": str(a.dtype),
                    "elements": a.elements, "bytes": a.bytes, "offset": a.offset}
                   for a in res.shared],
        "shared_bytes": res.shared_bytes,
        "static_shared_bytes": res.static_shared_bytes,
        "dynamic_shared_bytes": res.dynamic_shared_bytes,
        "registers": [{"name": r.name, "what": r.what, "words": r.words}
                      for r in res.registers],
        "register_words": res.register_words,
        "register_budget": res.register_budget,
        "occupancy": None if res.occupancy is None else {
            "resident": res.occupancy.resident,
            "in_flight_bytes": res.occupancy.in_flight_bytes, "cap": res.occupancy.cap,
            "launch_shared_bytes": res.occupancy.launch_shared_bytes,
            "reason": res.occupancy.reason, "min_blocks": res.occupancy.min_blocks},
        "limits": target_named(res.target).to_json(),
    }


def _reducer_json(rp: ReducerPlan) -> dict:
    buffer = rp.reducer
    op = buffer.reducer.op
    offset, count = rp.participants
    return {
        "reducer": buffer.name,
        "line": buffer.span.line,
        "shape": list(buffer.shape),
        "dtype": str(buffer.dtype),
        "op": op,
        "planner": rp.planner,
        "participants": {"offset": offset, "count": count},
        "storage": rp.storage.to_json(),
        "sites": [{"line": s.update.span.line, "col": s.update.span.col,
                   "loop": s.loop.to_json(), "guard_replica": s.guard_replica}
                  for s in rp.sites],
        "finalizes": [_finalize_json(fp, op) for fp in rp.finalizes],
        "workspace_words": rp.workspace_words,
        "notes": [d.to_json() for d in rp.notes],
    }


def _finalize_json(fp: FinalizePlan, op: str) -> dict:
    fin = fp.finalize
    return {
        "line": fin.span.line,
        "dst": fin.dst.name if fin.dst is not None else None,
        "batch_hint": fin.batch,
        "width": fp.width,
        "scale": fp.scale,
        "barrier_id": fp.barrier_id,
        "barrier_count": fp.barrier_count,
        "dst_layout": fp.dst_layout.to_json() if fp.dst_layout is not None else None,
        "chunks": [{"first": c.first, "count": c.count,
                    "steps": [step_json(s, op) for s in c.steps]} for c in fp.chunks],
        "publish": None if fp.publish is None else {
            "index_vars": list(fp.publish.index_vars), "addr": str(fp.publish.addr),
            "terms": fp.publish.terms, "barrier": step_json(fp.publish.barrier, op),
            "text": publish_text(fp, op)},
    }


def step_json(step: Step, op: str = "⊕") -> dict:
    if isinstance(step, Shuffle):
        fields = {"step": "shuffle", "mask": step.mask}
    elif isinstance(step, Barrier):
        fields = {"step": "barrier", "id": step.id, "count": step.count}
    elif isinstance(step, ToWorkspace):
        fields = {"step": "to_workspace", "addr": str(step.addr)}
    elif isinstance(step, ReduceWorkspace):
        fields = {"step": "reduce_workspace", "dst": str(step.dst), "src": str(step.src),
                  "terms": step.terms}
    elif isinstance(step, FromWorkspace):
        fields = {"step": "from_workspace", "addr": str(step.addr), "terms": step.terms}
    else:
        raise TypeError(f"not a step: {step!r}")
    fields["guards"] = [{"expr": str(g.expr), "op": g.op, "value": g.value}
                        for g in step.guards]
    fields["text"] = step_text(step, op)
    return fields
