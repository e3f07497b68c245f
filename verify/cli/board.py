"""The board the processes of `check --jobs N` take their programs from: each process
has its share (verify.cli.affinity.shares), takes it from the front and, when it has
none left, takes from the end of the share with the most programs left — so a process
never idles while a program is untaken, and what it takes from another is what that one
would have judged last.

The board is a small file of this command's own (an unlinked temporary file, mapped
into memory and shared by the forked processes): per share its next and its end, per
program the process that took it (0: nobody). A take is a few memory operations under
a POSIX record lock on that file (fcntl.lockf); the system releases the lock of a
process that dies, so a killed worker never leaves the others waiting, and the parent
reads from the board which programs a dead worker had taken (verify.cli.workers makes
each an internal error). Only the standard library is imported."""
from __future__ import annotations

import fcntl
import mmap
import os
import tempfile

_INT = 4                                   # the board's numbers: int32, native order


class Board:
    def __init__(self, shares: list[list[int]], programs: int):
        self.shares = shares
        self._positions = 2 * len(shares)          # next and end of each share
        self._file = tempfile.TemporaryFile(prefix="verify-reducer-jobs-")
        size = (self._positions + programs) * _INT
        os.ftruncate(self._file.fileno(), size)
        self._memory = mmap.mmap(self._file.fileno(), size)
        self._numbers = memoryview(self._memory).cast("i")
        for k, share in enumerate(shares):
            self._numbers[2 * k], self._numbers[2 * k + 1] = 0, len(share)

    def take(self, me: int) -> int | None:
        """The next program for process `me` (0: the parent), marked as its; None when
        every program is taken."""
        fd = self._file.fileno()
        fcntl.lockf(fd, fcntl.LOCK_EX)
        try:
            numbers = self._numbers
            if numbers[2 * me] < numbers[2 * me + 1]:
                share, position = me, numbers[2 * me]
                numbers[2 * me] = position + 1
            else:
                share = max(range(len(self.shares)),
                            key=lambda k: numbers[2 * k + 1] - numbers[2 * k])
                if numbers[2 * share] >= numbers[2 * share + 1]:
                    return None
                position = numbers[2 * share + 1] - 1
                numbers[2 * share + 1] = position
            program = self.shares[share][position]
            numbers[self._positions + program] = me + 1
            return program
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN)

    def taker(self, program: int) -> int | None:
        """The process that took the program (0: the parent), None if none has."""
        taken = self._numbers[self._positions + program]
        return taken - 1 if taken else None

    def close(self) -> None:
        self._numbers.release()
        self._memory.close()
        self._file.close()
