"""A real Jupyter server for the browser tests: ``jupyter lab`` with nbgrader's server extensions,
a scratch HOME (its own ~/.jupyter with an nbgrader config naming the scratch exchange), a free
loopback port and token auth. Stopping it shuts its kernels down and leaves no process behind."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

BIN = Path(sys.executable).parent

# JupyterLab's own notices would cover the page in screenshots (news, update checks).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scratch_env(home: Path, user: str, exchange: Path, assignment_dir: Path | None = None) -> dict[str, str]:
    """Environment of one person (student or instructor): own HOME, login name and nbgrader exchange.

    A student (``assignment_dir`` given) submits under ``user`` (nbgrader would take the OS login)."""
    config = home / ".jupyter"
    config.mkdir(parents=True, exist_ok=True)
    lines = [f"c.Exchange.root = {str(exchange)!r}", f"c.Exchange.cache = {str(home / 'nbgrader-cache')!r}"]
    if assignment_dir is not None:
        lines.append(f"c.Exchange.assignment_dir = {str(assignment_dir)!r}")
        lines.append(f"c.CourseDirectory.student_id = {user!r}")
    (config / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n" + "\n".join(lines) + "\n")
    for name, values in LAB_SETTINGS.items():
        path = config / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_", "IPYTHON"))}
    env.update(
        HOME=str(home),
        USER=user,
        LOGNAME=user,
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONWARNINGS="ignore",
        MPLBACKEND="Agg",
    )
    return env


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    """A command line as the person whose environment ``env`` is; fails the test with its output."""
    proc = subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        cwd=cwd,
        env={**env, "COLUMNS": "200"},
        timeout=timeout,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc


class JupyterServer:
    def __init__(self, root: Path, env: dict[str, str], log: Path) -> None:
        self.root, self.env, self.log_path = root, env, log
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.proc: subprocess.Popen | None = None

    def url(self, path: str = "lab") -> str:
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}{sep}token={self.token}"

    def api(self, path: str, method: str = "GET", data: bytes | None = None):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path.lstrip('/')}",
            method=method,
            data=data,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read()
        return json.loads(body) if body else None

    def start(self, timeout: float = 120) -> JupyterServer:
        command = [
            str(BIN / "jupyter"),
            "lab",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            "--ServerApp.open_browser=False",
            "--LabApp.news_url=",
            "--ServerApp.allow_root=True",
        ]
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            command,
            cwd=self.root,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited with {self.proc.returncode}:\n{self.log_path.read_text()[-3000:]}"
                )
            try:
                self.api("api/status")
                return self
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"jupyter lab did not answer in {timeout:.0f} s") from None
                time.sleep(0.3)

    def processes(self) -> list[psutil.Process]:
        """Every process that belongs to this server: started with its scratch HOME (kernels included)."""
        home = self.env["HOME"]
        found = []
        for proc in psutil.process_iter(["pid"]):
            try:
                if proc.pid != os.getpid() and proc.environ().get("HOME") == home:
                    found.append(proc)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        return found

    def stop(self) -> list[str]:
        """Shut down (kernels first, as Jupyter does), then kill what is left; names of leftovers found."""
        if self.proc is None:
            return []
        if self.proc.poll() is None:
            try:
                self.api("api/shutdown", method="POST", data=b"")
            except (OSError, urllib.error.URLError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log.close()
        deadline = time.monotonic() + 10
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.2)
        names = [f"{p.pid} {' '.join(p.cmdline())[:120]}" for p in left]
        for proc in left:
            proc.kill()
        self.proc = None
        return names
