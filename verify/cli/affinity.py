"""Which process of `check --jobs N` judges which program first: programs that look
alike share a process (docs/design.md §15.1).

A process shares its terms and proofs (codegen.proofs.obligation) only with itself: a
program asking the questions an earlier program of the same process asked costs a
fraction of its first check (a second one-block program of 8 lanes on 128 threads:
0.013 s instead of 0.05), and all of it in another process. The questions are about
shapes, extents, thread counts, dtypes and reducer ops, which a TileLang program
writes as a name followed by a number or a string — `T.Parallel(BD)` with `BD = 8`,
`threads=THREADS`, `op="sum"` — so two programs are alike when most of those pairs,
module constants substituted, are the same (their Jaccard index at least SIMILAR).

This is only an order: every program is judged whatever the shares say, each share is
a preference (a process that runs out of its own takes another's, verify.cli.board),
and the output is played in the programs' order. Reading a file here that cannot be
read gives an empty signature; the check itself reports it. Only the standard library
is imported."""
from __future__ import annotations

import os
import re

# two programs are alike from this Jaccard index of their signatures on (measured on
# the examples: the one-block 8-lane family at 0.6-0.9 with each other, the GEMVs of one
# tiling at 0.7, unrelated programs below 0.45)
SIMILAR = 0.6
# past this many programs the pairs are not compared (quadratic: 2000 programs take
# about 0.2 s): each program is a group of its own, the shares split by count
GROUPED_PROGRAMS = 2000
# a signature reads at most this much of a file (a program's constants and calls are
# near its top; a generated file of megabytes would otherwise be read twice)
SIGNATURE_BYTES = 1 << 18

_CONSTANT = re.compile(r"^([A-Za-z_]\w*)\s*=\s*([\w.]+)\s*$", re.M)
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\"[^\"\n]*\"|'[^'\n]*'")


def signature(text: str) -> frozenset:
    """The program's (name, literal) pairs: each number or string with the name written
    just before it, module constants (`NAME = 8`, `dtype = T.float16`) replaced by
    their values first. Comments are dropped (a naive cut at `#`: a signature, not a
    parse)."""
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    constants = dict(_CONSTANT.findall(code))
    tokens = [constants.get(t, t) for t in _TOKEN.findall(code)]
    return frozenset((name, value) for name, value in zip(tokens, tokens[1:])
                     if value[0].isdigit() or value[0] in "\"'")


def groups(signatures: list[frozenset]) -> list[list[int]]:
    """The programs (indices) joined when alike, directly or through others (connected
    components), each group in the programs' order, the groups by their first program.
    Pairs are compared as bit sets, about 0.1 µs a pair: a thousand programs cost 0.05
    s, a few thousandths of their checks; past GROUPED_PROGRAMS each is alone."""
    if len(signatures) > GROUPED_PROGRAMS:
        return [[i] for i in range(len(signatures))]
    bit: dict = {}
    masks = []
    for features in signatures:
        mask = 0
        for feature in features:
            mask |= 1 << bit.setdefault(feature, len(bit))
        masks.append(mask)
    sizes = [m.bit_count() for m in masks]
    root = list(range(len(masks)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for i, a in enumerate(masks):
        for j in range(i + 1, len(masks)):
            common = (a & masks[j]).bit_count()
            if common and common >= SIMILAR * (sizes[i] + sizes[j] - common):
                root[find(j)] = find(i)
    members: dict[int, list[int]] = {}
    for i in range(len(masks)):
        members.setdefault(find(i), []).append(i)
    return sorted(members.values(), key=lambda g: g[0])


def shares(signatures: list[frozenset], processes: int) -> list[list[int]]:
    """Each process's share of the programs (indices), in the order it takes them: the
    groups, largest first, each given whole to the process with the fewest programs so
    far (ties: the lowest), so a share is its groups first and its programs alike to
    none last — the ones another process takes from its end when it runs out
    (verify.cli.board) cost the least shared work."""
    ordered = sorted(groups(signatures), key=lambda g: (-len(g), g[0]))
    out: list[list[int]] = [[] for _ in range(processes)]
    for group in ordered:
        min(out, key=len).extend(group)
    return out


def read_text(path: str) -> str:
    """A program file's text for its signature ("" when it cannot be read: the check
    reports that; bytes that are not UTF-8 are replaced, a signature needs no more).
    Only a regular file is read, as the check reads only those: a named pipe would
    wait here for a writer, or hand its text to the signature instead of the check."""
    if not os.path.isfile(path):
        return ""
    try:
        with open(path, "rb") as f:
            return f.read(SIGNATURE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
