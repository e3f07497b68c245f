"""Butterfly partitions of a reducer's participants: a `Partition` (width w = 2^k, scale
2^m) groups relative thread t with the threads that differ from it only in the bits of
2^m * [0, w); `candidates` lists every partition that tiles the participants, cheapest
first. The fast path's obligations (codegen.proofs.fast_obligations) are stated per
partition; its search (codegen.proofs.fast) tries them in this order."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.collectives import WARP


@dataclass(frozen=True)
class Partition:
    width: int
    scale: int
    participants: tuple[int, int]

    @property
    def groups(self) -> int:
        return self.participants[1] // self.width

    @property
    def shuffles_only(self) -> bool:
        offset, count = self.participants
        aligned = offset % WARP == 0 and count % WARP == 0
        return self.width == 1 or (aligned and self.width * self.scale <= WARP)

    def group_text(self, t: int) -> str:
        """`{0..7}` (contiguous) or `{1, 5, 9, ...}`, in absolute thread ids."""
        members = self.members(t)
        if self.scale == 1:
            return f"{{{members[0]}..{members[-1]}}}"
        shown = ", ".join(map(str, members[:3]))
        return f"{{{shown}, ..., {members[-1]}}}" if len(members) > 3 else f"{{{shown}}}"

    def describe(self) -> str:
        return f"width {self.width}" + (f", scale {self.scale}" if self.scale > 1 else "")

    def members(self, t: int) -> tuple[int, ...]:
        """The absolute threads of relative thread t's group."""
        offset = self.participants[0]
        base = t - ((t // self.scale) % self.width) * self.scale
        return tuple(offset + base + k * self.scale for k in range(self.width))


def candidates(participants: tuple[int, int]) -> list[Partition]:
    """Every butterfly partition that tiles the participants, cheapest first: shuffles
    only before a workspace exchange, then narrower before wider, then smaller scale."""
    count = participants[1]
    found = [Partition(1, 1, participants)]
    width = 2
    while width <= count:
        scale = 1
        while width * scale <= count:
            if count % (width * scale) == 0:
                found.append(Partition(width, scale, participants))
            scale *= 2
        width *= 2
    return sorted(found, key=lambda p: (not p.shuffles_only, p.width, p.scale))


def group_numbers(threads: np.ndarray, part: Partition) -> np.ndarray:
    """The partition's group of each (relative) thread."""
    span = part.width * part.scale
    return (threads // span) * part.scale + threads % part.scale
