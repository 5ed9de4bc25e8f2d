"""`shoe-controller simulate` end to end, against a real mosquitto.

Every test runs the real command in a child process (the daemon, its journal, the
device simulator on a pty, mock pins, the publisher) and listens on the broker like a
casino system and a table display would.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from referencing import Registry, Resource

from shoe_controller.journal import GENESIS, Journal
from shoe_controller.publish.payloads import verify_casino_payload
from shoe_controller.sim import cut_position, shuffled_shoe
from tests.support.broker import Mosquitto

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "shoe_controller" / "publish" / "schemas"
TABLE = "e2e-1"


# -- listening like a casino system -------------------------------------------------------


class Listener:
    """A paho MQTT 5 subscriber to every topic of the table, recording arrival times."""

    def __init__(self, broker: Mosquitto, table: str = TABLE, persistent: bool = False) -> None:
        self.messages: list[tuple[float, str, bytes, bool]] = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"listener-{id(self)}",
                                  protocol=mqtt.MQTTv5)
        self.client.reconnect_delay_set(min_delay=0.05, max_delay=0.2)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.topic = f"shoe/{table}/#"
        if persistent:  # a casino system's session: the broker queues for it while away
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties

            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 3600
            self.client.connect("127.0.0.1", broker.port, clean_start=False,
                                properties=props)
        else:
            self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert self.connected.wait(10), "listener could not connect"

    def _on_connect(self, client: Any, userdata: Any, flags: Any, rc: Any, props: Any) -> None:
        client.subscribe(self.topic, qos=1)
        self.connected.set()

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        with self.lock:
            self.messages.append((time.time(), msg.topic, bytes(msg.payload), bool(msg.retain)))

    def topic_messages(self, suffix: str) -> list[tuple[float, bytes, bool]]:
        with self.lock:
            return [(t, p, r) for t, topic, p, r in self.messages if topic.endswith(suffix)]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def retained(broker: Mosquitto, topic: str, timeout: float = 5.0) -> bytes | None:
    """The retained message of ``topic``, read by a fresh client."""
    got: list[bytes] = []
    done = threading.Event()
    c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    c.on_connect = lambda cl, u, f, rc, p: cl.subscribe(topic, qos=1)

    def on_message(cl: Any, u: Any, msg: Any) -> None:
        if msg.retain:
            got.append(bytes(msg.payload))
            done.set()

    c.on_message = on_message
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    done.wait(timeout)
    c.loop_stop()
    c.disconnect()
    return got[-1] if got else None


# -- running the command -------------------------------------------------------------------


def simulate_cmd(state_dir: Path, broker: Mosquitto | None, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "shoe_controller.cli", "simulate", "--shoes", "1",
           "--table-id", TABLE, "--state-dir", str(state_dir), "--quiet",
           "--drain-timeout", "20"]
    if broker is not None:
        cmd += ["--broker", broker.url]
    return cmd + list(extra)


def run_simulate(state_dir: Path, broker: Mosquitto | None, *extra: str,
                 timeout: float = 180) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(simulate_cmd(state_dir, broker, *extra), capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def journal_entries(state_dir: Path) -> list[Any]:
    with Journal.open(state_dir / "journal.sqlite3", readonly=True) as j:
        return list(j.replay())


def wait_for(cond: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def journal_tail(state_dir: Path) -> tuple[int, str | None]:
    """(last seq, last type) read straight from SQLite while the daemon writes."""
    path = state_dir / "journal.sqlite3"
    if not path.exists():
        return 0, None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
        try:
            row = conn.execute("SELECT seq, type FROM events ORDER BY seq DESC LIMIT 1"
                               ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0, None
    return (row[0], row[1]) if row else (0, None)


# -- checking what was received -------------------------------------------------------------


def schema_validators() -> dict[str, jsonschema.Draft202012Validator]:
    resources = []
    for path in SCHEMAS.rglob("*.schema.json"):
        doc = json.loads(path.read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
    registry = Registry().with_resources(resources)
    out = {}
    for name in ("casino_event", "status", "display_state"):
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        out[name] = jsonschema.Draft202012Validator(schema, registry=registry)
    return out


def value(code: str) -> int:
    rank = code[0]
    return {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}.get(rank) if not rank.isdigit() \
        else int(rank)


def reference_round(cards: list[str]) -> dict[str, Any]:
    """The tableau, written out independently: deal P B P B then the third-card rules on
    ``cards`` (enough cards in deal order); returns hands, totals, winner, natural."""
    it = iter(cards)
    p = [next(it), None, None]
    b = [next(it), None, None]
    p[1], b[1] = next(it), next(it)
    player, banker = [p[0], p[1]], [b[0], b[1]]

    def total(h: list[str]) -> int:
        return sum(value(c) for c in h) % 10

    pt, bt = total(player), total(banker)
    natural = pt >= 8 or bt >= 8
    if not natural:
        third = None
        if pt <= 5:
            third = next(it)
            player.append(third)
        if third is None:
            if bt <= 5:
                banker.append(next(it))
        else:
            v = value(third)
            draw = (bt <= 2 or (bt == 3 and v != 8) or (bt == 4 and 2 <= v <= 7)
                    or (bt == 5 and 4 <= v <= 7) or (bt == 6 and v in (6, 7)))
            if draw:
                banker.append(next(it))
    pt, bt = total(player), total(banker)
    winner = "player" if pt > bt else "banker" if bt > pt else "tie"
    return {"player": player, "banker": banker, "player_total": pt, "banker_total": bt,
            "winner": winner, "natural": natural}


def check_casino_feed(listener: Listener, state_dir: Path) -> list[dict[str, Any]]:
    """Sequence, chain, signatures and schemas of the casino feed against the journal.

    Returns the envelopes in seq order (one per seq). Duplicates (at-least-once) must be
    byte-identical.
    """
    from shoe_controller.keys import load_public_key
    key = load_public_key(str(state_dir / "signing.pub"))
    entries = journal_entries(state_dir)
    validators = schema_validators()
    by_seq: dict[int, bytes] = {}
    per_type: Counter[str] = Counter()
    for _t, payload, _r in listener.topic_messages("/casino/events"):
        env = verify_casino_payload(payload, key)  # signature and the message's own hash
        # jsonschema is slow (~10 ms a message): every type at least 5 times, 1 in 10 else.
        per_type[env["type"]] += 1
        if per_type[env["type"]] <= 5 or env["seq"] % 10 == 0:
            validators["casino_event"].validate(env)
        seq = env["seq"]
        if seq in by_seq:
            assert by_seq[seq] == payload, f"seq {seq} re-sent with different content"
        by_seq[seq] = payload
    assert sorted(by_seq) == list(range(1, len(entries) + 1)), (
        f"received seqs {min(by_seq, default=None)}..{max(by_seq, default=None)} "
        f"({len(by_seq)}), journal has {len(entries)}")
    envelopes = [json.loads(by_seq[s]) for s in sorted(by_seq)]
    prev = GENESIS
    for env, entry in zip(envelopes, entries, strict=True):
        assert env["prev_hash"] == prev, f"chain broken at seq {env['seq']}"
        assert env["hash"] == entry.hash and env["event"] == entry.data
        prev = env["hash"]
    return envelopes


def check_rounds(envelopes: list[dict[str, Any]]) -> int:
    """Every round_result matches its cards, dealt in order by the tableau."""
    dealt: dict[tuple[int, int], list[str]] = defaultdict(list)
    results = 0
    for env in envelopes:
        ev = env["event"]
        if ev["type"] == "card_dealt":
            dealt[(ev["shoe"], ev["round"])].append(ev["card"])
        elif ev["type"] == "round_result":
            cards = dealt[(ev["shoe"], ev["round"])]
            ref = reference_round(cards + ["__"] * 2)
            assert ref["player"] == ev["player"] and ref["banker"] == ev["banker"], (ev, cards)
            assert len(cards) == len(ev["player"]) + len(ev["banker"]), (ev, cards)
            for k in ("player_total", "banker_total", "winner", "natural"):
                assert ref[k] == ev[k], (k, ev)
            assert ev["settlement"]["tie"] == (8 if ev["winner"] == "tie" else -1)
            results += 1
    return results


def closing_times(entries: list[Any]) -> dict[tuple[int, int], float]:
    out = {}
    for e in entries:
        if e.type in ("result_confirmed", "round_voided"):
            d = e.data
            out[(d["shoe"], d["round"])] = datetime.fromisoformat(
                e.time.replace("Z", "+00:00")).timestamp()
    return out


def early_cards(listener: Listener, state_dir: Path) -> list[str]:
    """Messages that carried a card of a round not yet confirmed (or voided) when they
    arrived: must be none under on_result."""
    entries = journal_entries(state_dir)
    closed = closing_times(entries)
    hands: dict[tuple[int, int], dict[str, list[str]]] = defaultdict(
        lambda: {"player": [], "banker": []})
    for e in entries:
        if e.type == "card_dealt":
            d = e.data
            hands[(d["shoe"], d["round"])][d["hand"]].append(d["card"])
    bad = []
    for t, payload, _r in listener.topic_messages("/casino/events"):
        ev = json.loads(payload)["event"]
        has_card = any(ev.get(k) for k in ("card", "player", "banker"))
        if has_card and ev.get("round") is not None:
            key = (ev["shoe"], ev["round"])
            if key not in closed or t < closed[key]:
                bad.append(f"casino {ev['type']} of round {key}")
    for t, payload, _r in listener.topic_messages("/display/state"):
        st = json.loads(payload)
        shown = (st["player"]["cards"], st["banker"]["cards"])
        if not shown[0] and not shown[1]:
            continue
        # Which round are these cards from? (A display may keep the last result's cards
        # up while the next round starts.) The latest round whose hands begin with them.
        rounds = [k for k, h in hands.items() if k[0] == st["shoe"] and k[1] <= st["round"]
                  and h["player"][:len(shown[0])] == shown[0]
                  and h["banker"][:len(shown[1])] == shown[1]]
        if not rounds:
            bad.append(f"display state with cards {shown} of no dealt round")
            continue
        key = max(rounds)
        if key not in closed or t < closed[key]:
            bad.append(f"display state with cards of round {key}")
    return bad


# -- the tests ---------------------------------------------------------------------------------


def test_one_full_shoe_on_the_feeds(broker: Mosquitto, tmp_path: Path):
    listener = Listener(broker)
    state = tmp_path / "state"
    try:
        proc = run_simulate(state, broker, "--seed", "11", "--pace", "0.001",
                            "--inject", "extra-card=1,unreadable=1,foreign=1")
        time.sleep(0.3)
    finally:
        listener.close()
    assert "done: 1 shoe(s)" in proc.stdout and "0 message(s) left" in proc.stdout
    envelopes = check_casino_feed(listener, state)
    types = Counter(env["type"] for env in envelopes)
    assert types["shoe_started"] == 1 and types["shoe_ended"] == 1
    assert types["misdeal"] >= 1 and types["integrity_alert"] >= 1 and types["fault"] >= 1
    rounds = check_rounds(envelopes)
    assert rounds == types["round_result"] >= 55
    # Rounds numbered 1..n, each with exactly one result and one confirmation.
    numbers = [env["event"]["round"] for env in envelopes if env["type"] == "round_result"]
    assert numbers == list(range(1, rounds + 1))
    assert types["result_confirmed"] == rounds

    # Nothing of an unconfirmed round left the Pi (on_result is the default).
    assert early_cards(listener, state) == []

    validators = schema_validators()
    for _t, payload, _r in listener.topic_messages("/status"):
        validators["status"].validate(json.loads(payload))
    displays = listener.topic_messages("/display/state")
    assert displays
    for _t, payload, _r in displays[::10] + displays[-1:]:  # ~0.1 s per validation
        validators["display_state"].validate(json.loads(payload))

    # The retained display state is the end of the shoe, and right.
    raw = retained(broker, f"shoe/{TABLE}/display/state")
    assert raw is not None, "no retained display state"
    st = json.loads(raw)
    last = [env["event"] for env in envelopes if env["type"] == "round_result"][-1]
    assert st["table"] == TABLE and st["shoe"] == 1 and st["round"] == last["round"]
    assert st["result"]["winner"] == last["winner"]
    assert st["player"]["cards"] == last["player"] and st["banker"]["cards"] == last["banker"]
    winners = Counter(env["event"]["winner"] for env in envelopes
                      if env["type"] == "round_result")
    stats = st["statistics"]
    assert (stats["player"], stats["banker"], stats["tie"]) == (
        winners["player"], winners["banker"], winners["tie"])
    assert stats["rounds"] == rounds
    assert len(st["roads"]["bead_plate"]) == rounds  # one bead per round, ties included
    status = retained(broker, f"shoe/{TABLE}/status")
    assert status is not None and json.loads(status)["status"] == "offline"  # clean stop


def test_the_early_card_check_can_fail(broker: Mosquitto, tmp_path: Path):
    """per_card releases cards as dealt: the check above must see them (it can fail)."""
    listener = Listener(broker)
    state = tmp_path / "state"
    try:
        run_simulate(state, broker, "--seed", "12", "--pace", "0.002",
                     "--release", "per_card")
        time.sleep(0.3)
    finally:
        listener.close()
    assert len(early_cards(listener, state)) > 100


def persistent_broker(tmp_path: Path) -> Mosquitto:
    """A mosquitto that keeps sessions and queued messages across a restart, as Debian's
    default configuration does (`persistence true`)."""
    b = Mosquitto()
    store = tmp_path / "mosquitto-db"
    store.mkdir()
    with open(b.conf_path, "a") as f:
        f.write(f"persistence true\npersistence_location {store}/\n")
        if os.geteuid() == 0:  # as root mosquitto would drop to a user who cannot write here
            f.write("user root\n")
    return b.start()


def test_broker_restarted_mid_shoe_loses_nothing(tmp_path: Path):
    broker = persistent_broker(tmp_path)
    listener = Listener(broker, persistent=True)
    state = tmp_path / "state"
    proc = subprocess.Popen(simulate_cmd(state, broker, "--seed", "13", "--pace", "0.004"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        wait_for(lambda: journal_tail(state)[0] > 250, 60, "250 journaled events")
        broker.restart(down_seconds=1.0)
        assert listener.connected.wait(10)
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, out + err
        assert "0 message(s) left" in out, out + err
        time.sleep(0.3)
    finally:
        if proc.poll() is None:
            proc.kill()
        listener.close()
        broker.stop()
    assert journal_tail(state)[0] > 600
    envelopes = check_casino_feed(listener, state)
    check_rounds(envelopes)


def test_sigkill_mid_round_then_restart_resumes_the_same_shoe(broker: Mosquitto,
                                                               tmp_path: Path):
    listener = Listener(broker)
    state = tmp_path / "state"
    seed = "14"
    cmd = simulate_cmd(state, broker, "--seed", seed, "--pace", "0.003")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        wait_for(lambda: journal_tail(state)[0] > 200 and journal_tail(state)[1] == "card_dealt",
                 60, "a card dealt mid-shoe")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        before = journal_entries(state)
        last_round = max(e.data["round"] for e in before if e.type == "round_started")
        assert not any(e.type in ("round_result", "round_voided") and
                       e.data.get("round") == last_round for e in before), \
            "the kill was meant to land mid-round"
        proc2 = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
        assert proc2.returncode == 0, proc2.stdout + proc2.stderr
        assert "resuming from the journal" in proc2.stdout
        time.sleep(0.3)
    finally:
        if proc.poll() is None:
            proc.kill()
        listener.close()
    entries = journal_entries(state)
    assert [e.data for e in entries[:len(before)]] == [e.data for e in before]
    envelopes = check_casino_feed(listener, state)
    check_rounds(envelopes)
    # The same shoe, card for card: what left the shoe is exactly the seeded shuffle, in
    # order, no card lost or dealt twice across the kill.
    out = [e.data["card"] for e in entries
           if e.type in ("burn_indicator", "card_burned", "card_dealt")]
    deck = [c.code for c in shuffled_shoe(seed, 1)]
    assert out == deck[:len(out)]
    assert len(out) >= cut_position(seed, 1, len(deck))
    assert sum(e.type == "shoe_ended" for e in entries) == 1


def test_no_broker_still_runs_and_says_so(tmp_path: Path):
    from tests.support.broker import free_port

    proc = subprocess.run(
        simulate_cmd(tmp_path / "s", None, "--broker", f"mqtt://127.0.0.1:{free_port()}",
                     "--pace", "0.005"),
        capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unreachable" in proc.stdout
    assert "done: 1 shoe(s)" in proc.stdout
    n = len(journal_entries(tmp_path / "s"))
    conn = sqlite3.connect(tmp_path / "s" / "journal.sqlite3")
    try:
        (pending,) = conn.execute("SELECT COUNT(*) FROM outbox").fetchone()
    finally:
        conn.close()
    assert pending >= n  # every event (and the display state) waits in the outbox


@pytest.mark.parametrize("command", ["simulate", "run"])
def test_malformed_config_refuses_to_start_naming_the_key(tmp_path: Path, command: str):
    bad = tmp_path / "table.toml"
    bad.write_text('[table]\nid = "T9"\n\n[rules]\ndecks = "eight"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "shoe_controller.cli", command, "--config", str(bad),
         "--state-dir", str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "decks" in proc.stderr and "table.toml" in proc.stderr
    assert not (tmp_path / "state" / "journal.sqlite3").exists()


def test_injected_network_outages_lose_nothing(broker: Mosquitto, tmp_path: Path):
    """--inject broker-outage cuts the daemon's path to the broker (all connections
    dropped, new ones refused) while the listener stays connected: every event still
    arrives, once the outbox catches up."""
    listener = Listener(broker)
    state = tmp_path / "state"
    try:
        proc = run_simulate(state, broker, "--seed", "15", "--pace", "0.002",
                            "--inject", "broker-outage=2", "--outage-seconds", "1.5")
        time.sleep(0.3)
    finally:
        listener.close()
    assert proc.stderr.count("injected broker outage") >= 1, proc.stderr
    assert "0 message(s) left" in proc.stdout
    check_rounds(check_casino_feed(listener, state))
