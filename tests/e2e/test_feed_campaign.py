"""Fault campaign (issue 13), bounded in time: the real daemon (`simulate`) deals while
`feed follow` follows it through a loopback path the test controls, and

1. mosquitto is SIGKILLed with persistence and restarted;
2. follow's path is cut while the daemon publishes (follow's session is clean: what is
   published meanwhile is queued for nobody): a gap by construction;
3. follow's path stalls, so mosquitto acknowledges to the daemon and queues for follow
   messages it then loses when it is SIGKILLed without persistence (the path's buffers
   dropped too): the issue's own case, a gap by construction that only the journal can
   fill.

An auditor subscribed straight to the broker sees a replay request covering each gap;
follow ends with every seq exactly once, in order, byte-identical to the journal's
envelopes, with no finding, and its output verifies as a clean, signed capture."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from shoe_controller.journal import Journal
from shoe_controller.keys import init_keys, load_public_key
from shoe_controller.publish.consumer import verify_capture
from shoe_controller.publish.payloads import casino_payload
from shoe_controller.sim.table import CuttableProxy
from tests.support.broker import Mosquitto

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def _last_seq(path: Path) -> int:
    """The last seq ``follow`` wrote out in full: its output is read while it writes, so
    a last line without its newline is still being written and does not count."""
    try:
        lines = path.read_bytes().split(b"\n")[:-1]
    except FileNotFoundError:
        return 0
    return json.loads(lines[-1])["seq"] if lines else 0


def _head_seq(state: Path) -> int:
    try:
        return json.loads((state / "journal.sqlite3.head").read_bytes())["seq"]
    except (FileNotFoundError, ValueError):
        return 0


class _Requests:
    """The replay requests on the broker, as a casino's auditor subscribed there sees
    them (an observer of its own, connected straight to the broker, not through the
    follower's path): ``(from_seq, to_seq)`` in arrival order."""

    def __init__(self, port: int) -> None:
        self.seen: list[tuple[int, int]] = []
        self.subscribed = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        c.reconnect_delay_set(0.1, 0.5)
        c.on_connect = lambda cl, *_: cl.subscribe("shoe/T1/casino/replay", qos=1)
        c.on_subscribe = lambda *_: self.subscribed.set()
        c.on_disconnect = lambda *_: self.subscribed.clear()
        c.on_message = self._message
        c.connect_async("127.0.0.1", port)
        c.loop_start()
        self.client = c

    def _message(self, _c, _u, msg) -> None:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            body = json.loads(msg.payload)
            self.seen.append((int(body["from_seq"]), int(body["to_seq"])))

    def covering(self, seq: int, since: int = 0) -> bool:
        return any(a <= seq <= b for a, b in self.seen[since:])

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _wait(cond, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_broker_killed_with_and_without_persistence_follow_ends_with_every_seq_once(
        tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o750)
    init_keys(str(state))
    out = tmp_path / "follow.jsonl"
    broker = Mosquitto()
    store = broker.conf_path.parent / "store"
    store.mkdir()
    os.chmod(broker.conf_path.parent, 0o755)
    os.chmod(store, 0o777)  # mosquitto drops to its own user when started as root
    plain = broker.conf_path.read_text()
    broker.conf_path.write_text(plain + f"persistence true\npersistence_location {store}/\n"
                                "autosave_interval 1\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen] = []
    broker.start()
    # follow reaches the broker through a path the test can cut or stall; the daemon
    # (simulate) and the auditor connect straight to the broker.
    proxy = CuttableProxy("127.0.0.1", broker.port)
    requests = _Requests(broker.port)
    head = functools.partial(_head_seq, state)
    try:
        assert requests.subscribed.wait(10)
        follow = subprocess.Popen(
            [sys.executable, "-m", "shoe_controller.cli", "feed", "follow", "--broker",
             f"mqtt://127.0.0.1:{proxy.port}", "--table", "T1", "--pubkey",
             str(state / "signing.pub"), "--out", str(out), "--seconds", "120"],
            stderr=subprocess.PIPE, cwd=ROOT, env=env)
        procs.append(follow)
        time.sleep(0.5)
        sim = subprocess.Popen(
            [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir",
             str(state), "--broker", broker.url, "--table-id", "T1", "--shoes", "8",
             "--pace", "0.01", "--quiet", "--release", "per_card"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
        procs.append(sim)
        _wait(lambda: head() >= 150, 30, "the daemon did not get going")

        # 1: SIGKILL with persistence (saved every second); follow loses its connection
        broker._proc.kill()
        broker._proc.wait()
        time.sleep(1.0)
        broker.start()
        _wait(lambda: _last_seq(out) >= head() - 20 > 0, 30,
              f"follow did not catch up after the first restart: {_last_seq(out)}")

        # 2: follow's path cut while the daemon publishes: follow's session is a clean
        # one, so what is published meanwhile is queued for nobody (a gap by construction)
        proxy.outage(None)
        cut_at = head()
        _wait(lambda: head() >= cut_at + 5, 20, "the daemon stopped during the cut")
        cut_from = head() + 1  # published after follow's connection was gone
        _wait(lambda: head() >= cut_from + 30, 20, "the daemon stopped during the cut")
        asked = len(requests.seen)
        proxy.restore()
        _wait(lambda: _last_seq(out) >= cut_from + 30, 30,
              f"follow did not fill the cut: at {_last_seq(out)}, head {head()}")
        assert requests.covering(cut_from, asked), (
            f"seq {cut_from} (published while follow was cut off) came back without a "
            f"replay request: {requests.seen[asked:]}")

        # 3: the case: the broker acknowledged messages and lost them. follow's
        # path stalls (the broker queues for follow what it acknowledged to the daemon),
        # then the broker is SIGKILLed without persistence and the path's buffers are
        # dropped: those events exist only in the journal.
        broker.conf_path.write_text(plain)
        proxy.hold()
        held_at = head()
        # a few events on: the path's reader, blocked when the hold began, has passed
        # the one chunk it was reading and now waits
        _wait(lambda: head() >= held_at + 5, 20, "the daemon stopped during the stall")
        lost_from = head() + 1  # published after follow stopped receiving
        _wait(lambda: head() >= lost_from + 100, 20, "the daemon stopped during the stall")
        broker._proc.kill()
        broker._proc.wait()
        proxy.outage(None)  # drops what the stalled path held
        proxy.release()
        _wait(lambda: not requests.subscribed.is_set(), 10, "the auditor missed the kill")
        time.sleep(0.5)
        broker.start()
        _wait(requests.subscribed.is_set, 10, "the auditor did not resubscribe")
        asked = len(requests.seen)
        proxy.restore()
        _wait(lambda: _last_seq(out) >= head() - 20 > lost_from + 100, 30,
              f"follow did not fill the lost events: at {_last_seq(out)}, head {head()}")
        assert requests.covering(lost_from, asked), (
            f"seq {lost_from} (acknowledged by the killed broker, never delivered) came "
            f"back without a replay request: {requests.seen[asked:]}")

        # the end: follow catches up with the head while the daemon still runs; then the
        # daemon stops and follow gets the last events live
        _wait(lambda: _last_seq(out) >= head() > 0, 30,
              f"follow stopped at seq {_last_seq(out)}, head {head()}")
        sim.send_signal(signal.SIGTERM)
        sim.wait(30)
        _wait(lambda: _last_seq(out) >= head(), 10,
              f"follow missed the last events: at {_last_seq(out)}, head {head()}")
        follow.send_signal(signal.SIGTERM)
        _, err = follow.communicate(timeout=30)
        err = err.decode(errors="replace")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        requests.close()
        proxy.close()
        broker.stop()
    lines = out.read_bytes().splitlines()
    seqs = [json.loads(ln)["seq"] for ln in lines]
    assert seqs == list(range(1, len(seqs) + 1)), "not every seq exactly once, in order"
    assert len(seqs) == head() >= 450
    # byte-identical to what the journal's rows give, and a clean capture for verify
    pub = load_public_key(str(state / "signing.pub"))
    with Journal.open(state / "journal.sqlite3", readonly=True) as journal:
        from shoe_controller.keys import load_signing_key
        key = load_signing_key(str(state / "signing.key"))
        for entry, line in zip(journal.replay(1, len(lines)), lines, strict=True):
            assert casino_payload(entry, "T1", journal.epoch, key) == line
    report = verify_capture((b"shoe/T1/casino/events " + ln for ln in lines), [pub], "T1")
    assert report.ok and report.duplicates == 0, report.summary()
    asked = int(err.rsplit(" replay request(s)", 1)[0].rsplit(", ", 1)[-1])
    assert asked >= 2, f"follow says it asked {asked} time(s): {err[-500:]}"
    assert "0 finding(s)" in err, err[-2000:]
