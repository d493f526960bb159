"""The grader's side of the line protocol with the sandboxed worker (:mod:`.inside.worker`).

One JSON object a line each way, both bounded: a line longer than :data:`MAX_MESSAGE_BYTES` or with
more than :data:`MAX_JSON_ITEMS` items is refused before it is parsed, and everything read is decoded as
untrusted (:mod:`.inside.codec`). The worker's stand-ins for upstream functions (a function the student
calls that an earlier notebook defined) ask the grader for the trusted answer: :func:`serve_upstream`.
"""

from __future__ import annotations

import os
import select
import time
from typing import Any

import numpy as np

from .channel import LineClosed, LineReader, LineTimeout, LineTooLong
from .inside import codec

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_JSON_ITEMS = 2_000_000  # a reply with more list items than this is refused before parsing
MAX_UPSTREAM_ITEMS = 1_000_000  # numbers in one stand-in call's arguments
MAX_UPSTREAM_INT = 100_000  # largest integer argument (d_model, length) a stand-in call may pass


class Timeout(Exception):
    """The worker did not answer (or take the request) by the deadline."""


class Crashed(Exception):
    """The worker ended, or said something that is not the protocol."""


def send(fd: int, message: dict, deadline: float) -> None:
    """Write ``message`` as one JSON line to the worker's stdin ``fd`` (non-blocking) by ``deadline``."""
    data = memoryview((codec.dumps(message) + "\n").encode())
    while data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Timeout
        _, writable, _ = select.select([], [fd], [], remaining)
        if not writable:
            raise Timeout
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            continue
        except (BrokenPipeError, OSError) as exc:
            raise Crashed("proses siswa berhenti") from exc
        data = data[written:]


def receive(reader: LineReader, deadline: float) -> dict:
    """The worker's next JSON line, as an object; refused (:class:`Crashed`) when it is not one."""
    try:
        line = reader.read_line(deadline)
    except LineTimeout:
        raise Timeout from None
    except LineClosed:
        raise Crashed("proses siswa berhenti") from None
    except LineTooLong:
        raise Crashed("keluaran terlalu besar") from None
    if line.count(b",") > MAX_JSON_ITEMS:
        raise Crashed("keluaran terlalu besar")
    if time.monotonic() > deadline:
        raise Timeout
    try:
        message = codec.loads_untrusted(line)
    except codec.DecodeError as exc:
        raise Crashed(str(exc)) from exc
    if not isinstance(message, dict):
        raise Crashed("pesan bukan objek")
    return message


def serve_upstream(implementation: Any, message: dict) -> dict:
    """The trusted upstream function's answer to a request the worker's stand-in sent.

    Arguments come from student code: they are decoded strictly and bounded (numbers in arrays,
    size of integers) before trusted code runs on them in the grader process.
    """
    try:
        args = codec.decode_untrusted(message.get("args"))
        raw_kwargs = message.get("kwargs")
        if not isinstance(args, list) or not isinstance(raw_kwargs, dict) or len(raw_kwargs) > 8:
            raise codec.DecodeError("bentuk permintaan salah")
        kwargs = {str(k)[:40]: codec.decode_untrusted(v) for k, v in raw_kwargs.items()}
        if sum(_items(v) for v in [*args, *kwargs.values()]) > MAX_UPSTREAM_ITEMS:
            raise codec.DecodeError("argumen terlalu besar")
    except codec.DecodeError as exc:
        return {"op": "upstream", "ok": False, "error": "TypeError", "message": str(exc)}
    try:
        with np.errstate(all="ignore"):
            value = implementation(*args, **kwargs)
        return {"op": "upstream", "ok": True, "value": codec.encode(value)}
    except Exception as exc:  # noqa: BLE001 (the answer to arguments the student chose may be an error)
        return {"op": "upstream", "ok": False, "error": type(exc).__name__, "message": str(exc)[:300]}


def _items(value: Any) -> int:
    """How many numbers a decoded value holds; huge integers count as huge (they size arrays)."""
    if isinstance(value, (list, tuple)):
        return sum(_items(v) for v in value) + 1
    if isinstance(value, int) and abs(value) > MAX_UPSTREAM_INT:
        return MAX_UPSTREAM_ITEMS + 1
    return int(getattr(value, "size", 1))
