"""A real JupyterHub on this machine for the browser tests (issue 32): PAM log-in of real unix users,
each user's JupyterLab spawned as that user, and the course's formgrader as a hub service run as the
instructor in the course directory, reachable by the course staff (instructor and teaching assistant).

Every user and service gets its own origin (``JupyterHub.subdomain_host``: ``NAME.localhost``, the
service at ``pe-course--service.localhost``; chromium sends ``*.localhost`` to the loopback). That is what
lets formgrader's iframe load on JupyterHub >= 4.1 without opening a hole: each server says
``Content-Security-Policy: frame-ancestors 'self'``, so only pages of the same server may frame it, and a
student's server is never the same origin as the staff's (nbgrader's documentation, "Formgrader with
jupyterhub>=4.1", and JupyterHub's "Mitigating same-origin deployments").

The hub runs as root (to read /etc/shadow through PAM and to start servers as their users); what it
needs outside Python is npm's ``configurable-http-proxy`` on PATH."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .jupyter import free_port

BIN = Path(sys.executable).parent
COURSE_ID = "pe-course"  # the course's nbgrader_config.py: CourseDirectory.course_id
SERVICE = COURSE_ID  # nbgrader finds the course's formgrader as the hub service named after the course
STAFF_GROUP = f"formgrade-{COURSE_ID}"  # nbgrader's course list looks for groups named formgrade-<course>
# What each Jupyter server of the hub answers, so that formgrader's iframe loads from its own server only.
FRAME_SELF = "frame-ancestors 'self'"


def proxy_command() -> str | None:
    return shutil.which("configurable-http-proxy")


@dataclass
class Hub:
    """The hub of one test module: its state, logs and configuration live in ``root`` (readable by all:
    the users' servers read the Jupyter configuration in ``root/etc-jupyter``)."""

    root: Path
    venv: Path  # the venv the users' servers and the service run from
    course: Path  # the course directory, owned by the instructor
    exchange: Path
    instructor: str
    assistant: str
    students: tuple[str, ...]
    passwords: dict[str, str] = field(default_factory=dict)  # each user's unix password (PAM checks it)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def users(self) -> tuple[str, ...]:
        return (self.instructor, self.assistant, *self.students)

    def url(self, path: str = "hub/") -> str:
        return f"http://localhost:{self.port}/{path.lstrip('/')}"

    def user_url(self, user: str, path: str = "lab") -> str:
        return f"http://{user}.localhost:{self.port}/user/{user}/{path.lstrip('/')}"

    def service_url(self, path: str = "lab") -> str:
        return f"http://{SERVICE}--service.localhost:{self.port}/services/{SERVICE}/{path.lstrip('/')}"

    # What an administrator writes once (the deployment guide shows the same files).
    def jupyter_config(self) -> Path:
        """The system-wide Jupyter configuration of every server the hub starts (as /etc/jupyter would
        be): the exchange and course of nbgrader, and the frame rule above."""
        etc = self.root / "etc-jupyter"
        etc.mkdir(exist_ok=True)
        (etc / "nbgrader_config.py").write_text(
            "c = get_config()  # noqa: F821\n"
            f"c.Exchange.root = {str(self.exchange)!r}\n"
            f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        )
        (etc / "jupyter_server_config.py").write_text(
            "c = get_config()  # noqa: F821\n"
            f"c.ServerApp.tornado_settings = {{'headers': {{'Content-Security-Policy': {FRAME_SELF!r}}}}}\n"
        )
        return etc

    def hub_config(self) -> str:
        etc = self.jupyter_config()
        environment = {
            "PATH": f"{self.venv}/bin:/usr/bin:/bin",
            "JUPYTER_CONFIG_PATH": str(etc),
            "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg",
        }
        service = {
            "name": SERVICE,
            "url": f"http://127.0.0.1:{free_port()}",
            "command": [f"{self.venv}/bin/jupyterhub-singleuser"],
            "user": self.instructor,
            "cwd": str(self.course),
            "environment": {**environment, "JUPYTERHUB_DEFAULT_URL": "/lab"},
            "oauth_no_confirm": True,
        }
        config = {
            "JupyterHub": {
                "bind_url": f"http://127.0.0.1:{self.port}",
                "subdomain_host": f"http://localhost:{self.port}",
                "hub_ip": "127.0.0.1",
                "hub_port": free_port(),
                "db_url": f"sqlite:///{self.root}/jupyterhub.sqlite",
                "cookie_secret_file": str(self.root / "jupyterhub_cookie_secret"),
                "authenticator_class": "pam",
                "services": [service],
                "load_groups": {STAFF_GROUP: {"users": [self.instructor, self.assistant]}},
                "load_roles": [
                    {
                        "name": STAFF_GROUP,
                        "groups": [STAFF_GROUP],
                        "scopes": [
                            f"access:services!service={SERVICE}",
                            "list:services",
                            f"read:services!service={SERVICE}",
                        ],
                    }
                ],
            },
            "ConfigurableHTTPProxy": {
                "api_url": f"http://127.0.0.1:{free_port()}",
                "pid_file": str(self.root / "proxy.pid"),
            },
            "Authenticator": {"allowed_users": sorted(self.users)},
            "Spawner": {
                "cmd": [f"{self.venv}/bin/jupyterhub-singleuser"],
                "default_url": "/lab",
                "environment": environment,
                "start_timeout": 180,
                "http_timeout": 180,
            },
        }
        lines = ["c = get_config()  # noqa: F821"]
        for section, values in config.items():
            lines += [f"c.{section}.{key} = {value!r}" for key, value in values.items()]
        return "\n".join(lines) + "\n"

    def start(self, timeout: float = 120) -> Hub:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        config = self.root / "jupyterhub_config.py"
        config.write_text(self.hub_config())
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        self.log = self.root / "jupyterhub.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [str(BIN / "jupyterhub"), "-f", str(config)],
                cwd=self.root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.url("hub/api/"), timeout=5) as reply:
                    if reply.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"jupyterhub did not answer in {timeout:.0f} s:\n{self.tail()}")
            time.sleep(0.5)

    def tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def _running(self) -> list[str]:
        """The users' processes still running: not a zombie (ended, its parent not yet told; one whose
        parent ended waits for an init that reaps it, which a container's may never do)."""
        left = []
        for user in self.users:
            found = subprocess.run(
                ["ps", "-u", user, "-o", "stat=,pid=,args="], capture_output=True, text=True
            )
            left += [
                f"{user}: {line.strip()}"
                for line in found.stdout.splitlines()
                if line.strip() and not line.strip().startswith("Z")
            ]
        return left

    def stop(self) -> list[str]:
        """Stop the hub (it stops the proxy, the service and every user's server), then kill what is
        left of the users' processes; returns what was found left."""
        if self.proc is not None and self.proc.poll() is None:
            # The staff service's server is stopped first, as an administrator would: JupyterHub stops a
            # service with SIGINT and sends SIGTERM only 30 s later (a service's spawner takes no
            # configuration), and that server went on after the SIGINT (seen: 32 s of every teardown).
            subprocess.run(["pkill", "-TERM", "-u", self.instructor, "-f", "jupyterhub-singleuser"])
            # JupyterHub's cleanup_servers (default) stops the users' servers and its service on SIGTERM
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        deadline = time.monotonic() + 10  # a server's last children may take a moment to end
        while (left := self._running()) and time.monotonic() < deadline:
            time.sleep(0.2)
        for user in self.users:
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
        pid_file = self.root / "proxy.pid"
        if pid_file.exists():
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
        return left
