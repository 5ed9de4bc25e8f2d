"""Local leaks (issue 14, finding 4): outside systemd the state dir was 0755 and the
journal 0644, so any local user read the open round's cards; the serial port was held
with an advisory lock only, so a second process read card frames."""

from __future__ import annotations

import errno
import os
import queue
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware_bridge.config import SerialConfig
from firmware_bridge.link import Link
from firmware_bridge.simulator import DeviceSimulator

ROOT = Path(__file__).resolve().parents[1]


def simulate(state: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`simulate` from a shell whose umask is the usual 0022."""
    return subprocess.run(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir", str(state),
         "--shoes", "1", "--pace", "0", "--quiet", "--broker", "mqtt://127.0.0.1:9",
         "--drain-timeout", "0.1", *extra],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        preexec_fn=lambda: os.umask(0o022))


def modes(state: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(os.stat(state).st_mode)}
    for p in state.iterdir():
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            out[p.name] = stat.S_IMODE(st.st_mode)
    return out


def test_simulate_makes_the_state_dir_0750_and_its_files_0640_at_most(tmp_path):
    state = tmp_path / "state"
    proc = simulate(state)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = modes(state)
    assert got["."] == 0o750
    assert "journal.sqlite3" in got and "fingerprints.sqlite3" in got, got
    assert got.pop("signing.pub", 0o644) == 0o644  # the public key: public by design
    for name, mode in got.items():
        # nothing for others, no group write: 0750 / 0640 (or tighter, e.g. 0600 keys)
        assert mode & 0o027 == 0, f"{name}: {mode:04o}"


@pytest.mark.parametrize("what", ["dir", "journal"])
def test_a_wider_state_dir_or_journal_is_refused_in_one_line(tmp_path, what):
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(state, 0o755 if what == "dir" else 0o750)
    journal = state / "journal.sqlite3"
    if what == "journal":
        journal.write_bytes(b"")
        os.chmod(journal, 0o644)
    proc = simulate(state)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    target = state if what == "dir" else journal
    assert lines[0].endswith(f"chmod {'750' if what == 'dir' else '640'} {target}"), lines
    assert os.stat(target).st_mode & 0o777 in (0o755, 0o644)  # left as it was
    if what == "dir":
        assert not journal.exists()


FAST = dict(heartbeat_timeout=0.3, handshake_timeout=0.2, ack_timeout=0.05,
            reconnect_initial=0.02, reconnect_max=0.1, poll_interval=0.005)


def _second_open(path: str) -> int:
    """errno of another process opening the tty (0: it could), as an ordinary user:
    root may open an exclusive tty anyway, so as root the child drops to nobody."""
    code = ("import os, sys\n"
            "if os.geteuid() == 0:\n"
            "    os.setgid(65534); os.setuid(65534)\n"
            "try:\n"
            "    os.close(os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK))\n"
            "except OSError as e:\n"
            "    print(e.errno); sys.exit(0)\n"
            "print(0)\n")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


@pytest.mark.parametrize("exclusive", [True, False])
def test_the_shoes_port_is_held_exclusively(exclusive):
    """With [serial] exclusive (the default) the kernel refuses a second open of the
    shoe's tty (TIOCEXCL): EBUSY. The control case without it: the open succeeds, so the
    check does see a second reader when there is one."""
    with DeviceSimulator(heartbeat_interval=0.05) as sim:
        tty = os.path.realpath(sim.path)  # /dev/pts/N (the simulator's path is a link)
        os.chmod(tty, 0o666)  # so the unprivileged child is not stopped by the mode
        q: queue.Queue[object] = queue.Queue()
        link = Link(SerialConfig(port=sim.path, exclusive=exclusive, **FAST), q)
        link.start()
        try:
            deadline = time.monotonic() + 10
            while not link.is_up and time.monotonic() < deadline:
                time.sleep(0.01)
            assert link.is_up
            assert _second_open(tty) == (errno.EBUSY if exclusive else 0)
        finally:
            link.stop()
