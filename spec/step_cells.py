"""Where each step of a finalize plan acts, evaluated from its expressions once for every
consumer: the participants a step's guards admit, the workspace words a store writes, a
reduction reads and writes, a load reads, and the words a publication combines.

The simulator (interp.collective, interp.sim_reducers) executes these arrays, adding its
checks (bounds, races, poison); the pictures (codegen.finalize_svg) draw them. Neither
evaluates a step's expressions any other way, so a picture shows the data flow the
simulator checks. Threads are relative to the participant offset (spec.physical)."""
from __future__ import annotations

import numpy as np

from .physical import K, S, T, TERM, FromWorkspace, Guard, Publish, ReduceWorkspace, \
    ToWorkspace


def active(guards: tuple[Guard, ...], count: int) -> np.ndarray:
    """The relative threads in [0, count) that satisfy every guard."""
    t = np.arange(count, dtype=np.int64)
    keep = np.ones(count, dtype=bool)
    for g in guards:
        value = np.broadcast_to(g.expr.evaluate({T: t}), (count,))
        keep &= (value == g.value) if g.op == "==" else (value < g.value)
    return t[keep]


def store_words(step: ToWorkspace, rel: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """[len(rel), len(slots)]: the word each thread writes each slot to."""
    return _words(step.addr, {T: rel[:, None], S: slots[None, :]}, (len(rel), len(slots)))


def reduce_words(step: ReduceWorkspace, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([len(rel), terms] words each thread combines, [len(rel)] the word it writes)."""
    k = np.arange(step.terms, dtype=np.int64)
    src = _words(step.src, {T: rel[:, None], K: k[None, :]}, (len(rel), step.terms))
    return src, _words(step.dst, {T: rel}, (len(rel),))


def load_words(step: FromWorkspace, rel: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """[len(rel), len(slots), terms]: the words each thread combines into each slot."""
    k = np.arange(step.terms, dtype=np.int64)
    return _words(step.addr, {T: rel[:, None, None], S: slots[None, :, None],
                              K: k[None, None, :]}, (len(rel), len(slots), step.terms))


def publish_words(pub: Publish, shape, outputs: np.ndarray) -> np.ndarray:
    """[len(outputs), terms]: the words the holder of flat output outputs[n] combines,
    left to right."""
    index = np.unravel_index(outputs, tuple(shape))
    env = {v: np.asarray(ix, dtype=np.int64)[:, None] for v, ix in zip(pub.index_vars, index)}
    env[TERM] = np.arange(pub.terms, dtype=np.int64)[None, :]
    return _words(pub.addr, env, (len(outputs), pub.terms))


def _words(expr, env: dict, shape) -> np.ndarray:
    return np.broadcast_to(expr.evaluate(env), shape).astype(np.int64)
