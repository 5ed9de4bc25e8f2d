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


def query(state: Path, sql: str, *args: object) -> list[tuple]:
    uri = f"file:{state / 'journal.sqlite3'}?mode=ro"
    for _ in range(50):
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=5)
            try:
                return conn.execute(sql, args).fetchall()
            finally:
                conn.close()
        except sqlite3.OperationalError:
            time.sleep(0.05)
    raise AssertionError("cannot read the journal")


def events(state: Path) -> list[tuple[int, str, dict]]:
    rows = query(state, "SELECT seq, type, body FROM events ORDER BY seq")
    return [(s, t, json.loads(b)) for s, t, b in rows]


def count(state: Path) -> int:
    if not (state / "journal.sqlite3").exists():
        return 0
    return int(query(state, "SELECT COUNT(*) FROM events")[0][0])


def disk_faults(state: Path) -> list[int]:
    return [r[0] for r in query(state, "SELECT seq FROM events WHERE type = 'fault' AND "
                                       "body LIKE '%\"kind\":\"disk_full\"%' ORDER BY seq")]


def after(state: Path, seq: int) -> list[str]:
    return [r[0] for r in query(state, "SELECT type FROM events WHERE seq > ? ORDER BY seq",
                                seq)]


def stop_cleanly(proc: subprocess.Popen) -> None:
    """SIGTERM, as systemd stops the service: the daemon exits 0."""
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 0


def reap(proc: subprocess.Popen) -> None:
    """Kill what a failed test left running."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def assert_journal_verifies(state: Path) -> None:
    """`shoe-controller journal verify` says the journal is sound (hash chain, schema)."""
    verify = subprocess.run([sys.executable, "-m", "shoe_controller.cli", "journal", "verify",
                             str(state / "journal.sqlite3")], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert verify.returncode == 0, verify.stdout + verify.stderr


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
         "--config", str(cfg), "--seed", SEED, "--pace", "0.006", "--quiet", "--shoes", "2",
         "--broker", "mqtt://127.0.0.1:9", "--drain-timeout", "0", "-v"],
        stdout=subprocess.PIPE, stderr=open(log, "ab"), text=True, cwd=ROOT)


def test_disk_full_pauses_with_the_alarm_and_resumes_with_nothing_lost(small_fs, tmp_path):
    state, filler = small_fs / "state", small_fs / "filler"
    cfg = tmp_path / "table.toml"
    log = Path(os.environ.get("DISK_FULL_LOG", tmp_path / "simulate.log"))
    cfg.write_text('[table]\nid = "DISK-1"\n[rules]\nconfirm = "button"\n'
                   "[journal]\nreserve_mb = 0\n")
    # 1. The disk fills up mid-shoe with no reserve: a write fails (ENOSPC).
    proc = start(state, cfg, log)
    try:
        wait(lambda: count(state) > 150, "150 events", proc=proc)
        fill(filler)
        wait(lambda: "cannot write the journal" in log.read_text(), "the write failure",
             proc=proc)
        assert "play stops (no new round, draw lock engaged)" in log.read_text()
        wait(lambda: "shoe draw lock engaged" in log.read_text(), "the draw lock", proc=proc)
        n = count(state)
        time.sleep(1.5)
        assert proc.poll() is None, "the daemon must never exit for a full disk"
        assert count(state) == n  # nothing more could be written...
        filler.unlink()  # ... until space is freed
        wait(lambda: disk_faults(state), "the disk_full fault for the casino", proc=proc)
        first = disk_faults(state)[0]
        wait(lambda: "round_resumed" in after(state, first), "the supervisor's resume",
             proc=proc)
        assert "disk space is back" in log.read_text()
        # 2. A clean stop; started again with a reserve.
        wait(lambda: count(state) > n + 20, "play to go on", proc=proc)
        stop_cleanly(proc)
    finally:
        reap(proc)
    cfg.write_text(cfg.read_text().replace("reserve_mb = 0", "reserve_mb = 1"))
    before = count(state)
    proc = start(state, cfg, log)
    try:
        wait(lambda: count(state) > before + 40, "play to go on after the restart",
             proc=proc)
        # 3. Below the reserve (but with room): the next round does not open.
        fill(filler, leave=512 * 1024)
        wait(lambda: len(disk_faults(state)) == 2, "the reserve's disk_full fault",
             proc=proc)
        second = disk_faults(state)[-1]
        time.sleep(1.5)  # the supervisor tries to resume meanwhile: refused
        later = after(state, second)
        assert "round_started" not in later and "round_resumed" not in later, later
        assert "resume refused: disk full" in log.read_text()
        filler.unlink()
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
        assert "simulate: done: 2 shoe(s)" in out
    finally:
        reap(proc)
    evs = events(state)
    assert [t for _, t, _ in evs].count("shoe_ended") == 2
    # Nothing lost, nothing twice: every card that left each shoe, in the shoe's order.
    for shoe in (1, 2):
        cards = [d["card"] for _, t, d in evs if d.get("shoe") == shoe and d.get("card")
                 and t in ("burn_indicator", "card_burned", "card_dealt", "misdeal")]
        deck = [c.code for c in shuffled_shoe(SEED, shoe)]
        assert cards == deck[: len(cards)] and len(cards) > 300, shoe
    assert [s for s, _, _ in evs] == list(range(1, len(evs) + 1))
    assert_journal_verifies(state)


def test_a_publisher_starts_on_a_full_disk(small_fs):
    """Restarted while the disk is full after a crash, with journaled events not yet in
    the outbox: the publisher starts (no "cannot rollback"), and stages them once there is
    space, nothing twice."""
    from shoe_controller.journal import Journal
    from shoe_controller.keys import SigningKey
    from shoe_controller.publish.config import MqttConfig
    from shoe_controller.publish.publisher import Publisher

    path = small_fs / "journal.sqlite3"
    key = SigningKey.generate()
    config = MqttConfig(url="mqtt://127.0.0.1:9", release="per_card")
    # a process that dies (no clean close: its WAL stays) after an unstaged append
    crash = subprocess.run([sys.executable, "-c", f"""
import os
from shoe_controller.journal import Journal
from shoe_controller.keys import SigningKey
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.publisher import Publisher
j = Journal.open({str(path)!r}, table_id="T1")
p = Publisher(j, MqttConfig(url="mqtt://127.0.0.1:9", release="per_card"), "T1",
              key=SigningKey.generate())
p.append([{{"type": "shoe_started", "shoe": 1, "decks": 8}}])
j.append([{{"type": "round_started", "shoe": 1, "round": 1}}])
os._exit(0)
"""], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert crash.returncode == 0, crash.stderr
    filler = small_fs / "filler"
    fill(filler)
    with Journal.open(path, table_id="T1") as j:
        pub = Publisher(j, config, "T1", key=key)
        pub.start()  # stages nothing (full), does not raise
        filler.unlink()
        pub.append([{"type": "card_dealt", "shoe": 1, "round": 1, "hand": "player",
                     "position": 1, "card": "QH", "orientation": None}])
        conn = sqlite3.connect(path)
        seqs = [r[0] for r in conn.execute("SELECT seq FROM outbox WHERE seq IS NOT NULL "
                                           "ORDER BY id")]
        conn.close()
        pub.stop(timeout=1)
    assert seqs[-2:] == [2, 3] and sorted(set(seqs)) == seqs  # caught up, nothing twice


def test_started_again_while_the_disk_is_still_full(small_fs, tmp_path):
    """Stopped cleanly and started again before space is freed: the ballast is given
    back so the journal opens, play stays stopped (draw lock, alarm, a disk_full fault
    journaled at once), and resumes once space is freed. Without a ballast the refusal
    says the disk is full and that the journal is not damaged, never "move it aside"."""
    state, filler = small_fs / "state", small_fs / "filler"
    cfg = tmp_path / "table.toml"
    log = tmp_path / "simulate.log"
    cfg.write_text('[table]\nid = "DISK-2"\n[rules]\nconfirm = "button"\n'
                   "[journal]\nreserve_mb = 1\n")
    proc = start(state, cfg, log)
    try:
        wait(lambda: count(state) > 100, "100 events", proc=proc)
        assert (state / "disk-ballast").stat().st_size == 4 * 1024 * 1024
        stop_cleanly(proc)
    finally:
        reap(proc)
    before = count(state)  # (a reader too needs room for the -shm file: read it first)
    fill(filler)
    proc = start(state, cfg, log)
    try:
        wait(lambda: "disk full at start" in log.read_text(), "the stop for the disk",
             proc=proc)
        wait(lambda: len(disk_faults(state)) == 1, "the disk_full fault", proc=proc)
        time.sleep(1.5)
        later = after(state, before)
        assert "round_started" not in later and "round_resumed" not in later, later
        assert proc.poll() is None, "the daemon must never exit for a full disk"
        filler.unlink()
        wait(lambda: "round_resumed" in after(state, disk_faults(state)[0]),
             "the supervisor's resume", proc=proc)
        wait(lambda: (state / "disk-ballast").exists(), "the ballast put back", proc=proc)
        stop_cleanly(proc)
    finally:
        reap(proc)
    evs = events(state)
    assert [s for s, _, _ in evs] == list(range(1, len(evs) + 1))
    assert_journal_verifies(state)


def test_a_full_disk_with_no_ballast_is_named_as_such_at_start(small_fs):
    """With no ballast left to give, the journal that cannot open on a full disk is
    refused as a full disk ("not damaged: leave it where it is"), never as a damaged
    journal to be moved aside, which would start the table over."""
    from types import SimpleNamespace

    from shoe_controller.daemon import StartRefused, open_daemon_journal
    from shoe_controller.journal import Journal
    from shoe_controller.storage import BALLAST_BYTES, DiskGuard

    path = small_fs / "journal.sqlite3"
    with Journal.open(str(path), table_id="T1") as j:
        j.append([{"type": "shoe_started", "shoe": 1, "decks": 8}])
    fill(small_fs / "filler")
    disk = DiskGuard(str(path), 0, BALLAST_BYTES)
    with pytest.raises(StartRefused) as refused:
        open_daemon_journal(str(path), "T1", SimpleNamespace(enabled=False), None, disk)
    msg = str(refused.value)
    assert "is full" in msg and "The journal is not damaged" in msg
    assert "move this file aside" not in msg and "\n" not in msg
    (small_fs / "filler").unlink()
    with open_daemon_journal(str(path), "T1", SimpleNamespace(enabled=False), None,
                             disk) as j:
        assert j.last_seq >= 1
