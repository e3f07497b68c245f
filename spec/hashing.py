"""Frozen value types hashed once: `hashed_once` keeps a frozen dataclass's structural
hash (the one `dataclass` generates from its fields) and stores it in the instance the
first time it is asked.

Why: layouts, index expressions and pipelines are dictionary keys on the simulator's
hot paths (the register tables of a layout, a pipeline's schedule, an iteration's
stage), and their generated hash walks the whole expression tree on every lookup.
Equality stays structural, so two equal values still find one entry.

The cached hash never travels: it is left out of pickles and copies, since a string's
hash differs between processes (PYTHONHASHSEED), and a worker process that unpickled a
stale hash would miss every lookup without an error."""
from __future__ import annotations

_SLOT = "_structural_hash"


def hashed_once(cls: type) -> type:
    """Class decorator, applied above @dataclass(frozen=True)."""
    structural = cls.__hash__
    assert structural is not None, f"{cls.__name__} is not hashable"

    def __hash__(self) -> int:
        found = self.__dict__.get(_SLOT)
        if found is None:
            found = structural(self)
            object.__setattr__(self, _SLOT, found)
        return found

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop(_SLOT, None)
        return state

    cls.__hash__ = __hash__
    cls.__getstate__ = __getstate__
    return cls
