"""Reading lines from a sandboxed process within a deadline, with a bound on their size.

Both sides that talk to sandboxed code use it: the scoring worker's JSON lines (:mod:`.client`) and the
notebook runner's one-line replies (``pe_course.steps.execute``). The process is untrusted: it may write
nothing, write forever, or close the pipe, and none of that may block or exhaust the grader.
"""

from __future__ import annotations

import os
import select
import time


class LineTimeout(Exception):
    """No complete line before the deadline."""


class LineClosed(Exception):
    """The process closed its end (or died) before a complete line."""


class LineTooLong(Exception):
    """More bytes than allowed without a newline."""


class LineReader:
    """Lines from a file descriptor; bytes after a line are kept for the next call."""

    def __init__(self, fd: int, max_bytes: int) -> None:
        self.fd, self.max_bytes = fd, max_bytes
        self._buf = bytearray()

    def read_line(self, deadline: float) -> bytes:
        """The next line without its newline (``time.monotonic()`` deadline)."""
        end = self._buf.find(b"\n")
        while end < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                raise LineTimeout
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                raise LineClosed
            newline = chunk.find(b"\n")  # search only the new bytes: linear in the message size
            end = len(self._buf) + newline if newline >= 0 else -1
            self._buf += chunk
            if len(self._buf) > self.max_bytes and (end < 0 or end > self.max_bytes):
                raise LineTooLong
        line = bytes(self._buf[:end])
        del self._buf[: end + 1]
        return line
