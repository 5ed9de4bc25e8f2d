"""A publishing process killed with SIGKILL loses nothing: the next start re-sends what
was pending, byte for byte, and continues the sequence."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from shoe_controller.journal import GENESIS
from shoe_controller.publish.payloads import verify_casino_payload
from tests.support.broker import Mosquitto, free_port
from tests.test_publish_helpers import Recorder, fixed_key

ROOT = Path(__file__).resolve().parents[2]
KEY = fixed_key(3)

CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from shoe_controller.journal import Journal
    from shoe_controller.publish.config import MqttConfig
    from shoe_controller.publish.publisher import Publisher
    from tests.test_publish_helpers import fixed_key, shoe_batches

    url, db, release, pace = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    stop_after = int(sys.argv[5])
    journal = Journal.open(db, table_id="T1")
    pub = Publisher(journal, MqttConfig(url=url, release=release, reconnect_min_delay=1,
                                        reconnect_max_delay=1), "T1", key=fixed_key(3))
    pub.start()
    # resume the same shoe where the journal stopped (appends are whole batches)
    done, appended = journal.last_seq, 0
    for batch in shoe_batches(77):
        if done > 0:
            done -= len(batch)
            continue
        if appended >= stop_after:
            break
        pub.append(batch)
        appended += 1
        print("batch", appended, journal.last_seq, flush=True)
        time.sleep(pace)
    print("appended", journal.last_seq, flush=True)
    ok = pub.flush(60)
    print("flushed" if ok else "NOT FLUSHED", pub.pending(), flush=True)
    pub.stop()
""").format(root=str(ROOT))


def spawn(url: str, db: Path, release: str, pace: float, stop_after: int = 10**9
          ) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, url, str(db), release, str(pace), str(stop_after)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def wait_line(proc: subprocess.Popen[str], prefix: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"child ended early: {proc.stderr.read() if proc.stderr else ''}")
        if line.startswith(prefix):
            return line.strip()
    raise AssertionError(f"no {prefix!r} from the child within {timeout} s")


def outbox_snapshot(db: Path) -> dict[int, bytes]:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT seq, payload FROM outbox WHERE seq IS NOT NULL").fetchall()
    conn.close()
    return {seq: bytes(p) for seq, p in rows}


def journal_last_seq(db: Path) -> int:
    conn = sqlite3.connect(db)
    (n,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
    conn.close()
    return int(n)


def check_feed(payloads: list[bytes], last: int) -> dict[int, bytes]:
    by_seq: dict[int, bytes] = {}
    for p in payloads:
        seq = verify_casino_payload(p, KEY.public)["seq"]
        if seq in by_seq:
            assert by_seq[seq] == p, f"re-sent seq {seq} is not byte-identical"
        by_seq[seq] = p
    assert sorted(by_seq) == list(range(1, last + 1))
    prev = GENESIS
    for s in range(1, last + 1):
        env = json.loads(by_seq[s])
        assert env["prev_hash"] == prev, f"chain broken at seq {s}"
        prev = env["hash"]
    return by_seq


@pytest.mark.e2e
def test_killed_while_the_broker_is_down_resends_everything_identically(tmp_path):
    port = free_port()
    db = tmp_path / "journal.sqlite3"
    first = spawn(f"mqtt://127.0.0.1:{port}", db, "per_card", 0.0, stop_after=40)
    wait_line(first, "appended")
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert first.returncode == -signal.SIGKILL
    pending = outbox_snapshot(db)
    last = journal_last_seq(db)
    assert last > 40 and sorted(pending) == list(range(1, last + 1))  # nothing was sent
    with Mosquitto(port=port) as broker:
        rec = Recorder(broker.port, topic="shoe/T1/casino/events").start()
        second = spawn(broker.url, db, "per_card", 0.0, stop_after=0)
        assert wait_line(second, "flushed").startswith("flushed")
        second.wait(20)
        assert rec.wait_for(lambda r: len(r.on("casino/events")) >= last)
        received = check_feed(rec.on("casino/events"), last)
        assert received == pending  # same seq, same bytes as staged before the crash
        rec.stop()
    assert outbox_snapshot(db) == {}


@pytest.mark.e2e
def test_killed_mid_stream_resumes_and_the_feed_has_no_gap(tmp_path):
    db = tmp_path / "journal.sqlite3"
    with Mosquitto() as broker:
        rec = Recorder(broker.port, topic="shoe/T1/casino/events").start()
        first = spawn(broker.url, db, "on_result", 0.002)
        wait_line(first, "batch 250 ")
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        killed_at = journal_last_seq(db)
        pending = outbox_snapshot(db)
        second = spawn(broker.url, db, "on_result", 0.0)  # deals the rest of the shoe
        assert wait_line(second, "flushed", timeout=120).startswith("flushed")
        second.wait(30)
        assert second.returncode == 0, second.stderr.read() if second.stderr else ""
        last = journal_last_seq(db)
        assert last > killed_at
        assert rec.wait_for(lambda r: len({json.loads(p)["seq"] for p in r.on("events")})
                            >= last)
        received = check_feed(rec.on("casino/events"), last)
        for seq, payload in pending.items():
            assert received[seq] == payload
        last_env = json.loads(received[last])
        assert last_env["type"] == "shoe_ended"
        rec.stop()


@pytest.mark.e2e
def test_the_last_will_says_offline_when_the_process_dies(tmp_path):
    db = tmp_path / "journal.sqlite3"
    with Mosquitto() as broker:
        child = spawn(broker.url, db, "per_card", 1.0, stop_after=1000)
        wait_line(child, "batch 1 ")
        status = Recorder(broker.port, topic="shoe/T1/status").start()
        assert status.wait_for(lambda r: any(b'"online"' in p for p in r.on("status")), 10)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        assert status.wait_for(lambda r: b'"offline"' in r.on("status")[-1], 15)
        last = json.loads(status.on("status")[-1])
        assert (last["status"], last["reason"], last["table"]) == (
            "offline", "connection lost", "T1")
        assert status.content_types == {"application/json"}
        status.stop()
