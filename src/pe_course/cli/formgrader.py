"""``pe-course formgrader``: Jupyter in the course directory with nbgrader's formgrader open, where the
written answers are graded by hand (the rubric above each answer)."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from ..course import Course
from .common import course_of
from .terminal import console


def serve(course: Course, ip: str = "127.0.0.1", port: int = 0) -> int:
    """Start Jupyter in ``course``'s directory, print the formgrader's URL, stop on Ctrl-C; the exit status."""
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or shutil.which("jupyter")
    if jupyter is None:
        console.print("[red]jupyter is not installed[/] in this environment (pip install -e .).")
        return 2
    if not port:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    token = secrets.token_hex(16)
    url = f"http://{ip}:{port}/formgrader?token={token}"
    command = [
        jupyter,
        "lab",
        f"--ServerApp.root_dir={course.root}",
        f"--ServerApp.ip={ip}",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
    ]
    if os.geteuid() == 0:
        command.append("--ServerApp.allow_root=True")  # a container or a teaching VM, typically
    console.print("Formgrader (manual grading of the written answers) at:")
    print(url, flush=True)  # one unbroken line, whatever the terminal's width
    console.print(f"Stop with Ctrl-C. Afterwards: pe-course feedback {course.assignment}")
    with subprocess.Popen(command, cwd=course.root) as server:
        try:
            return server.wait()
        except KeyboardInterrupt:
            server.terminate()
            server.wait(timeout=30)
            return 0


def cmd_formgrader(args) -> int:
    """Jupyter in the course directory with nbgrader's formgrader open (manual grading)."""
    return serve(course_of(args), args.ip, args.port)
