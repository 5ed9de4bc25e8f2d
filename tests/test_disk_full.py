"""A full disk never stops the daemon: `simulate` on a small tmpfs is filled, pauses with
its alarm and the shoe's draw lock, is freed, resumes, and nothing journaled is lost or
written twice (the cards in the journal are exactly the shuffled shoe's, in order)."""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoe_controller.sim import shuffled_shoe

ROOT = Path(__file__).resolve().parents[1]
SEED = "disk"


@pytest.fixture
def small_fs(tmp_path: Path):
    """A 32 MB tmpfs of our own (needs root and mount(2); unmounted after)."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (the disk-full cycle runs as root in CI)")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m,mode=0755", "tmpfs",
                           str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(path: Path, leave: int = 0) -> None:
    """Write ``path`` until the filesystem has ``leave`` bytes or fewer free."""
    chunk = b"\0" * 65536
    with open(path, "ab") as f:
        while True:
            st = os.statvfs(path.parent)
            free = st.f_bavail * st.f_frsize
            if free <= leave:
                return
            try:
                f.write(chunk[: max(4096, min(len(chunk), free - leave))])
                f.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                return


def events(state: Path) -> list[tuple[int, str, dict]]:
    uri = f"file:{state / 'journal.sqlite3'}?mode=ro"
    for _ in range(50):
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=5)
            try:
                rows = conn.execute("SELECT seq, type, body FROM events ORDER BY seq").fetchall()
            finally:
                conn.close()
            return [(s, t, json.loads(b)) for s, t, b in rows]
        except sqlite3.OperationalError:
            time.sleep(0.05)
    raise AssertionError("cannot read the journal")


def wait(cond, what: str, timeout: float = 30.0, proc=None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"simulate exited ({proc.returncode}) waiting for {what}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def start(state: Path, cfg: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir", str(state),
         "--config", str(cfg), "--seed", SEED, "--pace", "0.004", "--quiet",
         "--broker", "mqtt://127.0.0.1:9", "--drain-timeout", "0", "-v"],
        stdout=subprocess.PIPE, stderr=open(log, "ab"), text=True, cwd=ROOT)


def faults(evs: list[tuple[int, str, dict]]) -> list[int]:
    return [s for s, t, d in evs if t == "fault" and d["kind"] == "disk_full"]


def test_disk_full_pauses_with_the_alarm_and_resumes_with_nothing_lost(small_fs, tmp_path):
    state, filler = small_fs / "state", small_fs / "filler"
    cfg = tmp_path / "table.toml"
    log = Path(os.environ.get("DISK_FULL_LOG", tmp_path / "simulate.log"))
    cfg.write_text('[table]\nid = "DISK-1"\n[rules]\nconfirm = "button"\n'
                   "[journal]\nreserve_mb = 0\n")
    # 1. The disk fills up mid-shoe with no reserve: a write fails (ENOSPC).
    proc = start(state, cfg, log)
    try:
        wait(lambda: (state / "journal.sqlite3").exists() and len(events(state)) > 150,
             "150 events", proc=proc)
        fill(filler)
        wait(lambda: "cannot write the journal" in log.read_text(), "the write failure",
             proc=proc)
        assert "play stops (no new round, draw lock engaged)" in log.read_text()
        wait(lambda: "shoe draw lock engaged" in log.read_text(), "the draw lock", proc=proc)
        n = len(events(state))
        time.sleep(1.5)
        assert proc.poll() is None, "the daemon must never exit for a full disk"
        assert len(events(state)) == n  # nothing more could be written...
        filler.unlink()  # ... until space is freed
        wait(lambda: faults(events(state)), "the disk_full fault for the casino", proc=proc)
        wait(lambda: "round_resumed" in [t for s, t, _ in events(state)
                                         if s > faults(events(state))[0]],
             "the supervisor's resume", proc=proc)
        assert "disk space is back" in log.read_text()
        # 2. Stopped while full, started again while still full (the outbox has a backlog:
        # the broker is unreachable): it must not exit either.
        wait(lambda: len(events(state)) > n + 60, "play to go on", proc=proc)
        fill(filler)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    cfg.write_text(cfg.read_text().replace("reserve_mb = 0", "reserve_mb = 1"))
    before = len(events(state))
    proc = start(state, cfg, log)
    try:
        time.sleep(3)
        assert proc.poll() is None, log.read_text()[-2000:]
        assert "cannot rollback" not in log.read_text()
        assert len(faults(events(state))) == 1  # no room for the second one yet
        filler.unlink()
        wait(lambda: len(faults(events(state))) == 2, "the second disk_full fault", proc=proc)
        wait(lambda: len(events(state)) > before + 60, "play to go on after resuming",
             proc=proc)
        # 3. Below the reserve (but with room): the next round does not open.
        fill(filler, leave=512 * 1024)
        wait(lambda: len(faults(events(state))) == 3, "the reserve's disk_full fault",
             proc=proc)
        evs = events(state)
        third = faults(evs)[-1]
        time.sleep(1.5)  # the supervisor tries to resume meanwhile: refused
        after = [t for s, t, _ in events(state) if s > third]
        assert "round_started" not in after and "round_resumed" not in after, after
        assert "resume refused: disk full" in log.read_text()
        filler.unlink()
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
        assert "simulate: done: 1 shoe(s)" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    evs = events(state)
    assert [t for _, t, _ in evs].count("shoe_ended") == 1
    # Nothing lost, nothing twice: every card that left the shoe, in the shoe's order.
    cards = [d["card"] for _, t, d in evs if t in ("burn_indicator", "card_burned",
                                                   "card_dealt", "misdeal") and d.get("card")]
    deck = [c.code for c in shuffled_shoe(SEED, 1)]
    assert cards == deck[: len(cards)] and len(cards) > 300
    assert [s for s, _, _ in evs] == list(range(1, len(evs) + 1))
    verify = subprocess.run([sys.executable, "-m", "shoe_controller.cli", "journal", "verify",
                             str(state / "journal.sqlite3")], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert verify.returncode == 0, verify.stdout + verify.stderr
