"""A `check --jobs` worker's answers to the parent: (program index, Judged) pairs,
pickled and framed by their length, over a pipe of the worker's own.

The worker never waits on its pipe while it has programs to judge: the parent reads
only between its own programs, and a pipe holds 64 KiB, so a worker writes what the
pipe takes and keeps the rest for after its next program (Outbox); at its end it waits
until the parent has read everything. The parent reads whatever has come (Inbox) and
knows when nothing more can come: every worker has ended (its pipe closed, or its
process reaped). Only the standard library is imported."""
from __future__ import annotations

import os
import pickle
import select
from typing import Callable

_LENGTH = 8                                # a frame: its length (little-endian), then the pickle


class Outbox:
    """The worker's end."""

    def __init__(self, fd: int):
        self._fd = fd
        self._pending = bytearray()
        os.set_blocking(fd, False)

    def send(self, message) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._pending += len(data).to_bytes(_LENGTH, "little") + data
        self._write(wait=False)

    def close(self) -> None:
        """Everything sent, waiting for the parent to read it where it must."""
        self._write(wait=True)
        os.close(self._fd)

    def _write(self, wait: bool) -> None:
        while self._pending:
            try:
                written = os.write(self._fd, self._pending)
            except BlockingIOError:
                if not wait:
                    return
                select.select([], [self._fd], [])
                continue
            del self._pending[:written]


class Inbox:
    """The parent's end: one pipe per worker (frames longer than a pipe's atomic write
    would interleave in a shared one), each closed by whoever opened it. `ended()` says whether every worker has ended
    (the parent's bookkeeping of its workers: verify.cli.workers)."""

    def __init__(self, fds: list[int], ended: Callable[[], bool]):
        self._buffers = {fd: bytearray() for fd in fds}
        self._open = set(fds)
        self._ended = ended
        for fd in fds:
            os.set_blocking(fd, False)

    def receive(self, done: dict, wait: bool) -> bool:
        """Every answer that has come, put in done by program index (wait: until at least
        one has). False when waiting found none and none can come."""
        while True:
            if self._read() or not wait:
                self._unpack(done)
                return True
            if not self._open or self._ended():
                self._read()                       # what came before the end
                return self._unpack(done)
            select.select(list(self._open), [], [], 0.1)

    def _read(self) -> bool:
        """What the pipes hold now, into their buffers; True when a whole frame is there."""
        for fd in list(self._open):
            while True:
                try:
                    data = os.read(fd, 1 << 20)
                except BlockingIOError:
                    break
                if not data:                       # the worker's end is closed
                    self._open.discard(fd)
                    break
                self._buffers[fd] += data
        return any(_whole_frame(buffer) for buffer in self._buffers.values())

    def _unpack(self, done: dict) -> bool:
        """The whole frames in the buffers, into done; True when there was one (a frame
        cut short by a worker's death stays: its program has no answer)."""
        found = False
        for buffer in self._buffers.values():
            while _whole_frame(buffer):
                size = int.from_bytes(buffer[:_LENGTH], "little")
                index, judged = pickle.loads(buffer[_LENGTH:_LENGTH + size])
                del buffer[:_LENGTH + size]
                done[index] = judged
                found = True
        return found


def _whole_frame(buffer: bytearray) -> bool:
    return len(buffer) >= _LENGTH and \
        len(buffer) >= _LENGTH + int.from_bytes(buffer[:_LENGTH], "little")
