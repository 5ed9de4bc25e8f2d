"""`shoe-controller status [--json]` against a running `simulate` (its control socket)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def status(state: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shoe_controller.cli", "status",
                           "--state-dir", str(state), *extra], capture_output=True, text=True,
                          cwd=ROOT, timeout=30)


def test_status_of_a_running_simulate(tmp_path):
    state = tmp_path / "s"
    assert status(state).returncode == 2  # nothing listens yet: says so, exit 2
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir", str(state),
         "--pace", "0.02", "--quiet", "--broker", "mqtt://127.0.0.1:9"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        st: dict = {}
        while time.monotonic() < deadline:
            got = status(state, "--json")
            if got.returncode == 0:
                st = json.loads(got.stdout)
                if (st.get("round") or 0) >= 2:
                    break
            time.sleep(0.2)
        assert (st.get("round") or 0) >= 2, st
        assert st["shoe"] == 1 and st["link"] == {"up": True, "lock": st["link"]["lock"]}
        assert st["broker"]["enabled"] and not st["broker"]["connected"]
        assert "127.0.0.1:9" in st["broker"]["last_error"]
        assert st["outbox"] > 0  # the broker is unreachable: everything waits
        assert st["disk"]["full"] is None and st["disk"]["free_bytes"] > 0
        assert st["disk"]["reserve_bytes"] == 64 * 1024 * 1024
        assert st["journal"]["last_seq"] > 10
        assert st["versions"]["shoe_controller"] and st["versions"]["protocol"] == "1.1"
        text = status(state)
        assert text.returncode == 0
        lines = dict(line.split(None, 1) if not line.startswith(("shoe link", "last fault"))
                     else (line[:10].strip(), line[10:].strip())
                     for line in text.stdout.splitlines())
        assert lines["phase"].endswith(")") and "shoe 1" in lines["phase"]
        assert lines["broker"].startswith("DISCONNECTED (cannot reach the broker at 127.0.0.1:9")
        assert lines["disk"].endswith("reserve 64.0 MB")
        assert lines["shoe link"].startswith("up, draw lock")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert not os.path.exists(state / "control")
