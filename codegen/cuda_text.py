"""The text of a generated kernel: an indenting line writer and the C names of buffers
and variables (unique, never a C keyword or a name the renderer itself declares)."""
from __future__ import annotations

import re
from contextlib import contextmanager

# Names the generated code declares itself, and C/C++/CUDA words a TileLang name may
# not shadow.
RESERVED = frozenset("""
    tid slot term flat rep value element run run_elements lane auto bool break case char const continue
    default do double else enum extern float for goto if inline int long register restrict
    return short signed sizeof static struct switch typedef union unsigned void volatile
    while half true false new delete class this template typename namespace operator
    threadIdx blockIdx blockDim gridDim warpSize min max abs
""".split())


class Writer:
    """Lines of C, indented two spaces per open block."""

    def __init__(self):
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str = "") -> None:
        self.lines.append(("  " * self.depth + text) if text else "")

    def comment(self, text: str) -> None:
        self.line(f"// {text}")

    @contextmanager
    def block(self, header: str):
        self.line(f"{header} {{" if header else "{")
        self.depth += 1
        yield
        self.depth -= 1
        self.line("}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def term_loop(out: Writer, begin: int, end: int) -> str:
    """Writes the pragma of a fold loop over `term` in [begin, end) and returns its header.

    A fold reads one shared word per term (a workspace column, a T.reduce_* row). These loops
    are kept rolled (`#pragma unroll 1`): left to itself NVVM unrolls a 255-term fold by 16
    with 8- and 4-term remainder blocks, and ptxas -O3 of CUDA 13.0 (V13.0.88, sm_90)
    addresses three loads of the 8-term block 16 words too far. That read past the end of
    the workspace (compute-sanitizer: "Invalid __shared__ read") and summed wrong words;
    ptxas -O0 on the same PTX is correct, and a rolled loop never has such blocks.
    tests/programs/valid/canonical_batched_in_place.py is the kernel that showed it."""
    out.line("#pragma unroll 1")
    return f"for (int term = {begin}; term < {end}; ++term)"


class Names:
    """C identifiers: each distinct thing gets one, derived from its own name."""

    def __init__(self):
        self.taken: set[str] = set(RESERVED)
        self.by_key: dict[object, str] = {}

    def get(self, key: object, wanted: str) -> str:
        if key in self.by_key:
            return self.by_key[key]
        base = re.sub(r"\W", "_", wanted) or "v"
        if base[0].isdigit():
            base = "v" + base
        name = base
        n = 1
        while name in self.taken:
            name = f"{base}_{n}" if base in RESERVED or n > 1 else f"{base}_"
            n += 1
        self.taken.add(name)
        self.by_key[key] = name
        return name
