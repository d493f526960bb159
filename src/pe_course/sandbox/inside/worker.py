"""The grading worker: runs *inside* the sandbox and answers function calls.

It executes a submission's code cells (one failing cell does not stop the rest; IPython magics
are neutralised; plotting is headless) and then answers calls ``{"fn": name, "args": [...]}``
with JSON-encoded results (see ``codec.py``). Everything here is untrusted once student code
has run: the grader only believes what it can decode into plain numbers and compares itself.

Protocol: one JSON object per line. Requests arrive on the original stdin; replies leave on a
private duplicate of the original stdout. The student's own stdin/stdout/stderr are /dev/null.
This file must stay importable with the standard library and numpy only (it is copied into the
sandbox next to ``codec.py``).
"""

from __future__ import annotations

import builtins
import importlib
import os
import re
import sys
import traceback
import types

_MAGIC_LINE = re.compile(r"^(\s*)(?:[%!]|\w+\s*=\s*[%!])")
_RUN_BODY_CELL_MAGICS = ("%%time", "%%capture", "%%timeit")
MAX_MESSAGE = 600


def transform_cell(source: str) -> str | None:
    """Make a notebook cell plain Python: drop line magics and shell escapes.

    Returns None for a cell magic that is not Python (``%%bash``, ``%%writefile`` ...).
    """
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        if not lines[0].lstrip().startswith(_RUN_BODY_CELL_MAGICS):
            return None
        lines = lines[1:]
    out = []
    for line in lines:
        match = _MAGIC_LINE.match(line)
        out.append(f"{match.group(1)}pass" if match else line)
    return "\n".join(out)


class _Deferred(types.ModuleType):
    """Stands in for a heavy module until the student's code really uses it.

    Setup cells import ``matplotlib.pyplot`` (0.6 s) although graded functions rarely plot;
    the real module is imported on the first attribute access and used from then on.
    """

    def __getattr__(self, attr):
        real = self.__dict__.get("_real")
        if real is None:
            for name in DEFERRED:
                if isinstance(sys.modules.get(name), _Deferred):
                    del sys.modules[name]
            real = importlib.import_module(self.__name__)
            self.__dict__["_real"] = real
        return getattr(real, attr)


DEFERRED = ("matplotlib", "matplotlib.pyplot")


def _defer_heavy_imports() -> None:
    mpl, plt = _Deferred("matplotlib"), _Deferred("matplotlib.pyplot")
    mpl.__dict__["pyplot"] = plt
    sys.modules.update({"matplotlib": mpl, "matplotlib.pyplot": plt})


class _IPythonStub:
    """Enough of ``get_ipython()`` for notebooks that call it; does nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _short(text: object) -> str:
    text = str(text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _error_info(exc: BaseException) -> dict:
    tb = traceback.extract_tb(exc.__traceback__)
    line = next((f.lineno for f in reversed(tb) if f.filename.startswith("<sel ")), None)
    return {"error": type(exc).__name__, "message": _short(exc), "line": line}


_ABSENT = object()


def _upstream_proxy(name: str, window: dict, send, proto_in, codec):
    """Stands in for the student's ``name`` while a function built on it is graded.

    One mistake, one cell: ``rope_scores`` is graded with a correct ``apply_rope`` under the same
    name. The grader computes it (the reference code never enters the sandbox: only the values for
    the arguments asked come back) and answers only while the call it was made for is running.
    """

    def upstream(*args, **kwargs):
        if not window["open"]:
            raise RuntimeError(f"{name} hanya tersedia selama pemanggilan yang dinilai")
        send(
            {
                "event": "upstream",
                "args": codec.encode(list(args)),
                "kwargs": {k: codec.encode(v) for k, v in kwargs.items()},
            }
        )
        reply = codec.loads_untrusted(proto_in.readline())
        if not isinstance(reply, dict) or reply.get("op") != "upstream":
            raise RuntimeError("protokol")
        if reply.get("ok") is True:
            return codec.decode_untrusted(reply.get("value"))
        error = getattr(builtins, str(reply.get("error")), None)
        if not (isinstance(error, type) and issubclass(error, Exception)):
            error = RuntimeError
        raise error(str(reply.get("message", "")))

    upstream.__name__ = upstream.__qualname__ = name
    return upstream


def _restore_name(namespace: dict, name, saved) -> None:
    if not isinstance(name, str):
        return
    if saved is _ABSENT:
        namespace.pop(name, None)
    else:
        namespace[name] = saved


def main() -> None:
    import codec

    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    sys.stderr = sys.stdout
    _defer_heavy_imports()
    dumps, encode, decode = codec.dumps, codec.encode, codec.decode_untrusted

    def send(message: dict) -> None:
        proto_out.write(dumps(message) + "\n")
        proto_out.flush()

    pristine = dict(builtins.__dict__)

    def restore_builtins() -> None:
        """Undo whatever the submission did to builtins (isinstance, print, ...) before we talk."""
        if builtins.__dict__ != pristine:
            builtins.__dict__.clear()
            builtins.__dict__.update(pristine)

    namespace: dict = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "get_ipython": _IPythonStub,
        "display": lambda *a, **k: None,
    }

    while True:
        line = proto_in.readline()
        if not line:
            return
        request = codec.loads_untrusted(line)
        op = request.get("op")
        if op == "load":
            errors = []
            for cell in request["cells"]:
                send({"event": "cell", "index": cell["index"]})
                source = transform_cell(cell["source"])
                if source is None:
                    continue
                try:
                    code = compile(source, f"<sel {cell['index']}>", "exec")
                    exec(code, namespace)  # noqa: S102  (this is the sandbox)
                except BaseException as exc:  # noqa: BLE001  (student code may raise anything)
                    errors.append({"index": cell["index"], **_error_info(exc)})
                restore_builtins()
            functions = {}
            for name in request["functions"]:
                obj = namespace.get(name)
                functions[name] = "missing" if obj is None else ("ok" if callable(obj) else "not-callable")
            send({"event": "loaded", "functions": functions, "errors": errors})
        elif op == "call":
            reply = {"event": "result", "id": request["id"]}
            upstream = request.get("upstream")
            saved = namespace.get(upstream, _ABSENT) if isinstance(upstream, str) else _ABSENT
            window = {"open": False}
            try:
                args = decode(request["args"])
                kwargs = {k: decode(v) for k, v in request["kwargs"].items()}
                if isinstance(upstream, str):
                    window["open"] = True
                    namespace[upstream] = _upstream_proxy(upstream, window, send, proto_in, codec)
                result = namespace[request["fn"]](*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001
                window["open"] = False
                _restore_name(namespace, upstream, saved)
                restore_builtins()
                reply.update(ok=False, **_error_info(exc))
            else:
                window["open"] = False
                _restore_name(namespace, upstream, saved)
                restore_builtins()
                try:
                    reply.update(ok=True, value=encode(result))
                except BaseException as exc:  # noqa: BLE001
                    reply.update(ok=False, error="__unsupported__", message=_short(exc), line=None)
            send(reply)


if __name__ == "__main__":
    main()
