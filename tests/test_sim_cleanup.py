"""A SIGKILLed `simulate` leaves its device simulator's temp folder behind; the next
`simulate` removes it (and leaves a live one's alone)."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shoe_controller.sim.table import clean_stale_sim_dirs

ROOT = Path(__file__).resolve().parents[1]


def test_the_next_simulate_removes_what_a_killed_one_left(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir",
         str(tmp_path / "s"), "--pace", "0.05", "--quiet", "--broker", "mqtt://127.0.0.1:9"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    pattern = os.path.join(tempfile.gettempdir(), f"smart-shoe-sim-{proc.pid}-*")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not glob.glob(pattern):
            time.sleep(0.05)
        left = glob.glob(pattern)
        assert left, "the simulator's folder carries the pid"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert glob.glob(pattern) == left  # SIGKILL: nobody cleaned up
    mine = tempfile.mkdtemp(prefix=f"smart-shoe-sim-{os.getpid()}-")  # a live process's
    try:
        removed = clean_stale_sim_dirs()
        assert left[0] in removed and not glob.glob(pattern)
        assert os.path.isdir(mine)
    finally:
        os.rmdir(mine)
