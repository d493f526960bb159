"""Execute notebooks with nbclient — runs *inside* the sandbox, kernel and client together.

Usage (inside the sandbox): ``python nbexec.py``, then one JSON request per line on stdin::

    {"in": "01.in.ipynb", "out": "01.out.ipynb", "cell_timeout": 30, "total": 115}

and one line ``{"done": "01.out.ipynb"}`` on stdout per request. Every cell runs (errors and
time-outs are recorded, not fatal). OUT is written when the run ends, however it ends (time limit,
dead or wedged kernel), and during the run at most every ``SAVE_EVERY`` seconds, so that if this
process itself is killed only the last moments' outputs are lost; ``OUT.incomplete`` marks an
unfinished run.

One runner serves all notebooks of one student: the kernel is kept between notebooks (its namespace
reset, figures closed) and replaced when it died or overran. These runs only produce what the
student sees in feedback; scores come from the graders' separate worker.
The grader treats whatever comes back as untrusted display data.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import sys
import time

# The next notebook starts from an empty namespace with no figures open. (The shell's own reset is
# what `%reset -f` calls, without the magic's second full garbage collection: 70 ms a notebook.)
RESET = (
    "import sys as _s\n"
    "_s.modules.get('matplotlib.pyplot') and _s.modules['matplotlib.pyplot'].close('all')\n"
    "get_ipython().reset(new_session=False)"
)
SAVE_EVERY = 1.0  # seconds between progress writes of the executed notebook

# The kernel as ``python -m ipykernel_launcher`` starts it, without debugpy: ipykernel imports it at
# start-up for the Jupyter debugger, which nothing here uses (0.14-0.16 CPU-seconds of every kernel
# start, a tenth of a one-notebook student's kernel; measured 2026-12-03). The cwd leaves sys.path as
# the launcher makes it leave (the kernel puts it back once its own imports are done).
LAUNCH = (
    "import sys\n"
    "sys.modules['debugpy'] = None\n"
    "if sys.path and sys.path[0] in ('', __import__('os').getcwd()):\n"
    "    del sys.path[0]\n"
    "from ipykernel import kernelapp\n"
    "kernelapp.launch_new_instance()  # ipykernel_launcher"  # the kernel's role marker (sandbox/usage.py)
)


# A kernel forked ahead by sandbox/inside/zygote.py (pid, pipe): it waits for the command line and environment
# jupyter_client would launch it with. The first kernel this runner starts is that one; None otherwise.
PREPARED: tuple[int, int] | None = None


class _OutOfTime(Exception):
    pass


class _KernelStuck(Exception):
    """A cell timed out and the kernel did not answer the interrupt: it cannot run anything more."""


def _give_up(signum, frame):
    raise _OutOfTime("notebook time limit")


def lean_argv(argv: list[str]) -> list[str]:
    """A kernel spec's command with :data:`LAUNCH` instead of the launcher module (the rest unchanged)."""
    if argv[1:3] == ["-m", "ipykernel_launcher"]:
        return [argv[0], "-c", LAUNCH, *argv[3:]]
    return argv


def _kernel_manager_class():
    """nbclient's kernel manager, launching the kernel with :func:`lean_argv`, and its client ready as
    soon as the kernel is (:func:`_ready`)."""
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class LeanKernelClient(AsyncKernelClient):
        async def wait_for_ready(self, timeout=None):  # AsyncKernelClient's is jupyter_client's function
            await _ready(self, timeout)

    class LeanKernelManager(AsyncKernelManager):
        @default("client_factory")
        def _client_factory_default(self):
            return LeanKernelClient

        @property
        def kernel_spec(self):
            spec = super().kernel_spec
            if spec is not None:
                spec.argv = lean_argv(list(spec.argv))
            return spec

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            global PREPARED
            prepared, PREPARED = PREPARED, None
            if prepared is not None and kernel_cmd[1:3] == ["-c", LAUNCH] and self.provisioner is not None:
                self.provisioner.launch_kernel = functools.partial(_adopt, self.provisioner, prepared)
            elif prepared is not None:
                os.close(prepared[1])  # the waiting kernel ends
            return await super()._async_launch_kernel(kernel_cmd, **kw)

    return LeanKernelManager


async def _ready(client, timeout: float | None) -> None:
    """jupyter_client's ``wait_for_ready`` without its last step, which waits for 0.2 s of silence on
    IOPub (a fifth of a second of every student's run, doing nothing): what arrives there later is
    ignored anyway, as nbclient only takes the messages of the cell it is running. Kept: a
    ``kernel_info_reply``, and a message on IOPub after it (the subscription is live, no output lost)."""
    import asyncio
    from queue import Empty

    deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
    while True:
        client.kernel_info()
        try:
            reply = await client.shell_channel.get_msg(timeout=1)
        except Empty:
            pass
        else:
            if reply["msg_type"] == "kernel_info_reply":
                try:
                    await client.iopub_channel.get_msg(timeout=0.2)
                except Empty:
                    pass
                else:
                    client._handle_kernel_info_reply(reply)
                    return
        if not await client._async_is_alive():
            raise RuntimeError("Kernel died before replying to kernel_info")
        if time.monotonic() > deadline:
            raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")
        await asyncio.sleep(0)


async def _adopt(provisioner, prepared: tuple[int, int], cmd: list[str], **kwargs):
    """The provisioner's ``launch_kernel`` for the kernel forked ahead: send it what ``Popen`` would
    have been given, and hold it as the provisioner holds a process it started."""
    del provisioner.launch_kernel  # a restart launches as usual
    pid, pipe = prepared
    env = dict(kwargs.get("env") or os.environ)
    env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's launcher sets it
    cwd = kwargs.get("cwd") or os.getcwd()
    try:
        with os.fdopen(pipe, "wb") as f:
            f.write(json.dumps({"args": cmd[3:], "env": env, "cwd": str(cwd)}).encode())
    except OSError:  # it is gone (it was never the student's): start one the ordinary way
        return await provisioner.launch_kernel(cmd, **kwargs)
    provisioner.process = _Forked(pid)
    provisioner.pid = provisioner.pgid = pid  # it starts a session of its own, as the launcher's does
    provisioner.cwd = cwd
    return provisioner.connection_info


class _Forked:
    """What the provisioner uses of ``subprocess.Popen``, for a child this process forked."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode = pid, None

    def poll(self):
        if self.returncode is None:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = -signal.SIGKILL
            else:
                if done:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                import subprocess

                raise subprocess.TimeoutExpired(["kernel"], timeout)
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def main() -> int:
    # jsonschema imports the optional URI checker rfc3987_syntax, which builds a grammar for ~2 s;
    # notebook validation never needs it, so it is reported as absent (jsonschema handles that).
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
    import nbformat
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    def shutdown(km) -> None:
        with contextlib.suppress(Exception):
            run_sync(km.shutdown_kernel)(now=True)

    signal.signal(signal.SIGALRM, _give_up)
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    km = kc = None  # the kernel and our client of it, kept from one notebook to the next
    kernel_manager_class = _kernel_manager_class()
    for line in sys.stdin:
        request = json.loads(line)
        source, target = request["in"], request["out"]
        marker = target + ".incomplete"
        with contextlib.suppress(OSError):
            open(marker, "w").close()
        nb = nbformat.read(source, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(RESET))
        finished, client = False, None
        signal.alarm(int(request["total"]))
        try:
            if km is not None and not run_sync(km.is_alive)():  # type: ignore[arg-type]
                shutdown(km)
                km = kc = None
            cell_timeout = int(request["cell_timeout"])
            client = NotebookClient(
                nb,
                km=km,
                kernel_name="python3",
                kernel_manager_class=kernel_manager_class,
                extra_arguments=["--HistoryManager.hist_file=:memory:"],
                timeout=cell_timeout,
                startup_timeout=120,
                allow_errors=True,
                interrupt_on_timeout=True,
                record_timing=False,
                resources={"metadata": {"path": "."}},
                error_on_timeout={
                    "ename": "CellTimeoutError",
                    "evalue": f"sel melewati {cell_timeout} detik",
                    "traceback": [f"CellTimeoutError: sel melewati batas waktu {cell_timeout} detik"],
                },
            )
            client.kc = kc  # a connected client skips the start-up handshake (0.2 s of waiting)
            client.on_cell_executed = functools.partial(_after_cell, nbformat, nb, target, [time.monotonic()])
            km = kc = None  # owned by the client until it has run; kept for the next notebook below
            client.execute(cleanup_kc=False)
            km, kc = client.km, client.kc
            finished = True
        except BaseException:  # noqa: BLE001 (time limit, dead kernel: keep what was produced)
            if client is not None and client.km is not None:
                shutdown(client.km)
            km = kc = None  # the next notebook gets a fresh kernel
        finally:
            signal.alarm(0)
        answer = {"done": target}
        failed = _write(nbformat, nb, target)
        if failed:
            answer["error"] = failed  # the grader logs it beside "hasil eksekusi tidak ditemukan"
        if finished:
            with contextlib.suppress(OSError):
                os.remove(marker)
        reply.write(json.dumps(answer) + "\n")
    if km is not None:
        shutdown(km)
    return 0


def _after_cell(
    nbformat, nb, target: str, saved: list[float], cell=None, execute_reply=None, **kwargs
) -> None:
    """Save progress now and then; stop the notebook when the kernel ignored the interrupt after a
    time-out (the caller then writes what was produced)."""
    content = (execute_reply or {}).get("content", {})
    stuck = content.get("status") == "error" and content.get("ename") == "CellTimeoutError"
    if stuck and cell is not None:
        cell.outputs.append(
            nbformat.v4.new_output(
                "error",
                ename="CellTimeoutError",
                evalue=content.get("evalue", ""),
                traceback=content.get("traceback", []),
            )
        )
    if stuck:
        raise _KernelStuck
    if time.monotonic() - saved[0] >= SAVE_EVERY:
        _write(nbformat, nb, target)
        saved[0] = time.monotonic()


def _write(nbformat, nb, target: str) -> str | None:
    """Write the executed notebook without the reset cell, atomically; never fail the runner.

    The student's kernel shares this directory and may have put anything at these names. Returns
    why the write failed (e.g. the disk full), or None.
    """
    import tempfile

    out = nbformat.from_dict(nb)
    out.cells = out.cells[1:]
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) or ".", prefix=".nbexec-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            nbformat.write(out, f)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)
        return f"{type(exc).__name__}: {exc}"[:500]
    return None


if __name__ == "__main__":
    sys.exit(main())
