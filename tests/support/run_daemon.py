"""Run the real ``shoe-controller run`` in its own process for a while, then stop it."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any


def run_then_stop(cmd: list[str], state: Path, seconds: float,
                  **popen: Any) -> subprocess.CompletedProcess[str]:
    """Start ``cmd``, wait until its control socket appears in ``state`` (it is then up;
    at most 30 s, or until it exits), let it run ``seconds`` more, SIGTERM it and return
    what it printed and its exit status; a process that does not stop is killed."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)
    try:
        deadline = time.monotonic() + 30
        while not (state / "control").exists() and proc.poll() is None and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(seconds)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
