"""The Publisher against a real mosquitto: order, signatures, retained state, outages."""

from __future__ import annotations

import json
import os
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from shoe_controller.game.display_state import DisplayState, project, to_payload
from shoe_controller.journal import GENESIS, Journal, canonical_json
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.payloads import verify_casino_payload
from shoe_controller.publish.publisher import Publisher
from tests.support.broker import Mosquitto, free_port
from tests.test_publish_helpers import Recorder, eventually, fixed_key, shoe_batches

KEY = fixed_key(1)


def publisher(tmp_path, url: str, **cfg) -> tuple[Journal, Publisher]:
    journal = Journal.open(tmp_path / "journal.sqlite3", table_id="T1")
    config = MqttConfig(url=url, reconnect_min_delay=1, reconnect_max_delay=2, **cfg)
    return journal, Publisher(journal, config, "T1", key=KEY)


def check_casino_feed(payloads: list[bytes], last_seq: int) -> dict[int, dict]:
    """Every seq 1..last_seq present; duplicates byte-identical; signature, hash and chain
    verify. Returns the envelopes by seq."""
    by_seq: dict[int, bytes] = {}
    for p in payloads:
        env = verify_casino_payload(p, KEY.public)
        if env["seq"] in by_seq:
            assert by_seq[env["seq"]] == p, f"re-sent seq {env['seq']} differs"
        by_seq[env["seq"]] = p
    assert sorted(by_seq) == list(range(1, last_seq + 1)), "missing sequence numbers"
    envelopes = {s: json.loads(p) for s, p in by_seq.items()}
    prev = GENESIS
    for s in range(1, last_seq + 1):
        assert envelopes[s]["prev_hash"] == prev, f"chain broken at seq {s}"
        prev = envelopes[s]["hash"]
    return envelopes


def latest_retained(port: int, topic: str, timeout: float = 5.0) -> bytes | None:
    """What a fresh subscriber gets as the retained message of ``topic``."""
    got: list[bytes] = []
    ev = threading.Event()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)

    def on_message(client, userdata, msg):
        if msg.retain:
            got.append(bytes(msg.payload))
            ev.set()

    c.on_message = on_message
    c.connect("127.0.0.1", port)
    c.subscribe(topic, qos=1)
    c.loop_start()
    ev.wait(timeout)
    c.loop_stop()
    c.disconnect()
    return got[-1] if got else None


@pytest.mark.e2e
def test_a_whole_shoe_reaches_the_casino_feed_in_order_signed_and_chained(broker, tmp_path):
    rec = Recorder(broker.port).start()
    journal, pub = publisher(tmp_path, broker.url, release="on_result")
    pub.start()
    batches = list(shoe_batches(21))
    for batch in batches:
        pub.append(batch)
    assert pub.flush(30), f"outbox still has {pub.pending()} messages"
    last = journal.last_seq
    assert last == sum(len(b) for b in batches)
    assert rec.wait_for(lambda r: len({json.loads(p)["seq"] for p in r.on("casino/events")})
                        >= last)
    envelopes = check_casino_feed(rec.on("casino/events"), last)
    assert rec.content_types == {"application/json"}  # MQTT 5 Content Type on all
    arrival = [json.loads(p)["seq"] for p in rec.on("casino/events")]
    assert arrival == list(range(1, last + 1)), "not in journal order (or duplicated)"
    # the envelope matches the journal row exactly
    for entry in journal.replay():
        env = envelopes[entry.seq]
        assert canonical_json(env["event"]) == entry.body
        assert (env["time"], env["hash"], env["type"], env["table"]) == (
            entry.time, entry.hash, entry.type, "T1")
        assert env["shoe"] == entry.data["shoe"] and env["round"] == entry.data.get("round")
    # the display state is retained and is the projection of everything released
    expected = DisplayState(table="T1")
    for entry in journal.replay():
        expected = project(expected, entry.data)
    retained = latest_retained(broker.port, "shoe/T1/display/state")
    assert retained is not None
    state = json.loads(retained)
    assert state.pop("key_id") == KEY.key_id and len(state.pop("sig")) == 128
    assert state == to_payload(expected)
    assert json.loads(retained)["phase"] == "shoe_ended"
    status = json.loads(latest_retained(broker.port, "shoe/T1/status"))
    assert status["status"] == "online"
    pub.stop()
    status = json.loads(latest_retained(broker.port, "shoe/T1/status"))
    assert (status["status"], status["reason"]) == ("offline", "stopped")
    rec.stop()
    journal.close()


@pytest.mark.e2e
def test_under_on_result_no_topic_carries_a_card_of_the_unconfirmed_round(broker, tmp_path):
    rec = Recorder(broker.port).start()
    journal, pub = publisher(tmp_path, broker.url, release="on_result")
    pub.start()
    gen = shoe_batches(5)
    # play until round 3 is complete but NOT confirmed
    unconfirmed: list = []
    for batch in gen:
        if any(e.type == "result_confirmed" and e.round == 3 for e in batch):
            unconfirmed = batch
            break
        pub.append(batch)
    assert unconfirmed
    assert pub.flush(10)
    assert pub.held() > 0
    time.sleep(0.3)  # anything that would leak has had time to arrive

    def leaks() -> list[str]:
        bad = []
        for payload in rec.on("casino/events"):
            env = json.loads(payload)
            if env["round"] == 3 and env["type"] not in ("round_started", "bets_open"):
                bad.append(env["type"])
        for payload in rec.on("display/state"):
            state = json.loads(payload)
            # the cards shown are those of cards_round (the last result stays up until
            # the next round's first released card)
            if state["cards_round"] == 3 and (state["player"]["cards"]
                                              or state["banker"]["cards"]):
                bad.append("display cards")
            if state.get("result") and state["result"]["round"] == 3:
                bad.append("display result")
        return bad

    assert leaks() == []
    assert any(json.loads(p)["type"] == "round_started" and json.loads(p)["round"] == 3
               for p in rec.on("casino/events"))  # the check above could see round 3
    # the dealer confirms: now it all goes out, the display shows round 3's result
    pub.append(unconfirmed)
    assert pub.flush(10)
    assert rec.wait_for(lambda r: "round_result" in leaks() or False, 10)
    retained = json.loads(latest_retained(broker.port, "shoe/T1/display/state"))
    assert retained["result"]["round"] == 3
    pub.stop()
    rec.stop()
    journal.close()


@pytest.mark.e2e
def test_per_card_sends_each_card_as_it_is_dealt(broker, tmp_path):
    rec = Recorder(broker.port).start()
    journal, pub = publisher(tmp_path, broker.url, release="per_card")
    pub.start()
    for batch in shoe_batches(9, max_rounds=1):
        pub.append(batch)
        if any(e.type == "card_dealt" for e in batch):
            break
    assert pub.held() == 0 and pub.flush(10)
    assert rec.wait_for(lambda r: any(json.loads(p)["type"] == "card_dealt"
                                      for p in r.on("casino/events")))
    pub.stop()
    rec.stop()
    journal.close()


def persistent(broker: Mosquitto) -> Mosquitto:
    """Turn on mosquitto's persistence, so sessions (ours and the subscriber's) and their
    queued messages survive broker.restart(), as on a real installation."""
    store = broker.conf_path.parent / "store"
    store.mkdir(exist_ok=True)
    os.chmod(broker.conf_path.parent, 0o755)
    os.chmod(store, 0o777)  # mosquitto drops to its own user when started as root
    broker.conf_path.write_text(broker.conf_path.read_text()
                                + f"persistence true\npersistence_location {store}/\n")
    broker.restart()
    return broker


def durable_subscriber(port: int, topic: str, sink: list[bytes]) -> mqtt.Client:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="durable-sub",
                    protocol=mqtt.MQTTv5)
    c.reconnect_delay_set(1, 1)
    lock = threading.Lock()

    def on_message(client, userdata, msg):
        with lock:
            sink.append(bytes(msg.payload))

    c.on_message = on_message
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 3600
    c.connect("127.0.0.1", port, clean_start=False, properties=props)
    c.subscribe(topic, qos=1)
    c.loop_start()
    time.sleep(0.3)
    return c


@pytest.mark.e2e
def test_broker_restarted_mid_stream_loses_nothing(broker, tmp_path):
    persistent(broker)
    received: list[bytes] = []
    sub = durable_subscriber(broker.port, "shoe/T1/casino/events", received)
    journal, pub = publisher(tmp_path, broker.url, release="per_card")
    pub.start()
    assert pub._link.wait_connected(10)
    batches = list(shoe_batches(33))
    restart_at = len(batches) // 3
    restarter = threading.Thread(target=broker.restart, kwargs={"down_seconds": 1.5})
    backlog = []
    for i, batch in enumerate(batches):
        pub.append(batch)
        if i == restart_at:  # mid-stream: messages in flight, more appended while down
            restarter.start()
        if restarter.is_alive():
            backlog.append(pub.pending())
        time.sleep(0.004)
    restarter.join()
    assert max(backlog) > 5, "the outage did not hold anything back: test is not testing"
    assert pub.flush(60), f"{pub.pending()} messages never acknowledged"
    last = journal.last_seq
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if len({json.loads(p)["seq"] for p in list(received)}) >= last:
            break
        time.sleep(0.05)
    check_casino_feed(list(received), last)
    sub.loop_stop()
    sub.disconnect()
    pub.stop()
    journal.close()


@pytest.mark.e2e
def test_no_broker_queues_in_the_outbox_then_delivers(tmp_path):
    port = free_port()
    journal, pub = publisher(tmp_path, f"mqtt://127.0.0.1:{port}", release="per_card")
    pub.start()
    for batch in shoe_batches(2, max_rounds=3):
        pub.append(batch)
    eventually(lambda: "cannot reach the broker" in (pub.last_error or ""),
               what="the publisher to notice the broker is unreachable")
    assert not pub.connected
    assert pub.pending() >= journal.last_seq  # everything waits (plus the display state)
    with Mosquitto(port=port) as late:
        rec = Recorder(late.port, topic="shoe/T1/status").start()
        assert pub.flush(30)
        assert rec.wait_for(lambda r: any(json.loads(p)["status"] == "online"
                                          for p in r.on("status")))
        rec.stop()
        pub.stop()
    journal.close()


@pytest.mark.e2e
def test_a_refused_message_stays_in_the_outbox_until_accepted(tmp_path):
    broker = Mosquitto()
    acl = broker.conf_path.parent / "acl"
    acl.write_text("topic readwrite shoe/T1/status\ntopic readwrite shoe/T1/display/#\n"
                   "topic readwrite shoe/T1/casino/head\n")
    os.chmod(broker.conf_path.parent, 0o755)
    os.chmod(acl, 0o644)
    broker.conf_path.write_text(broker.conf_path.read_text() + f"acl_file {acl}\n")
    with broker:
        journal, pub = publisher(tmp_path, broker.url, release="per_card")
        pub.start()
        pub.append([{"type": "shoe_started", "shoe": 1, "decks": 8}])
        # the display state is accepted; the casino event gets "Not authorized"
        eventually(lambda: pub.pending() == 1, what="the display state to be acknowledged")
        time.sleep(0.5)
        assert pub.pending() == 1
        assert not pub.flush(0.5)
        acl.write_text(acl.read_text() + "topic readwrite shoe/T1/casino/events\n")
        rec = Recorder(broker.port, topic="shoe/T1/casino/events")
        broker.restart()  # re-reads the ACL
        rec.start()
        assert pub.flush(20), "refused message was not retried after the ACL changed"
        assert rec.wait_for(lambda r: len(r.on("casino/events")) >= 1)
        assert verify_casino_payload(rec.on("casino/events")[0], KEY.public)["seq"] == 1
        rec.stop()
        pub.stop()
        journal.close()


def test_submit_after_journal_append_and_catch_up_after_a_gap(tmp_path):
    """The two-step path: journal.append then submit; and entries journaled but never
    submitted (a crash between the two) are staged at the next start."""
    journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
    cfg = MqttConfig(release="per_card", display_feed=False)
    pub = Publisher(journal, cfg, "T1", key=KEY)
    pub.submit(journal.append([{"type": "shoe_started", "shoe": 1, "decks": 8}]))
    pub.submit(journal.append([{"type": "round_started", "shoe": 1, "round": 1}]))
    assert pub.pending() == 2
    journal.append([{"type": "round_voided", "shoe": 1, "round": 1, "reason": "x"}])
    # a new publisher (the process restarted) stages seq 3 from the journal
    pub2 = Publisher(journal, cfg, "T1", key=KEY)
    pub2._ensure_caught_up()
    assert pub2.pending() == 3
    # a later submit with a gap before it reads the gap back from the journal
    journal.append([{"type": "shoe_ended", "shoe": 1, "rounds": 1, "reason": "x"}])
    pub2.submit(journal.append([{"type": "shoe_started", "shoe": 2, "decks": 8}]))
    assert pub2.pending() == 5
    pub2.submit(list(journal.replay()))  # already staged: nothing new
    assert pub2.pending() == 5
    journal.close()


@pytest.mark.parametrize("cut", [1, 50, 190])
def test_a_restart_anywhere_stages_exactly_what_an_uninterrupted_run_does(tmp_path, cut):
    """Two shoes; one publisher runs straight through, another is replaced by a fresh one
    (a restart: state rebuilt from the journal) after `cut` appends. Same messages."""
    from tests.test_publish_helpers import shoe_events
    first = shoe_events(1)
    events = first + [msgspec_replace_shoe(e, 2) for e in shoe_events(2)]
    cfg = MqttConfig(release="on_result")

    def staged(path, cut_at):
        journal = Journal.open(path, table_id="T1")
        # the two journals get the same epoch, so their messages can be compared
        journal._conn.execute("UPDATE meta SET value = ? WHERE key = 'epoch'", ("ab" * 16,))
        journal.epoch = "ab" * 16
        pub = Publisher(journal, cfg, "T1", key=KEY)
        chunks = [events[i:i + 7] for i in range(0, len(events), 7)]  # (fewer fsyncs)
        for i, chunk in enumerate(chunks):
            if i == cut_at:
                pub = Publisher(journal, cfg, "T1", key=KEY)
            pub.append(chunk, time="2026-11-30T05:00:00.000000Z")
        conn = journal._conn
        casino = dict(conn.execute(
            "SELECT seq, payload FROM outbox WHERE seq IS NOT NULL").fetchall())
        display = conn.execute("SELECT payload FROM outbox WHERE seq IS NULL").fetchall()
        held = pub.held()
        journal.close()
        return casino, display, held

    straight = staged(tmp_path / "a.sqlite3", None)
    restarted = staged(tmp_path / "b.sqlite3", cut)
    assert straight == restarted
    assert len(straight[0]) == len(events)  # every event was released by the shoe's end


def msgspec_replace_shoe(event, shoe):
    import msgspec
    return msgspec.structs.replace(event, shoe=shoe)


@pytest.mark.e2e
def test_appends_from_several_threads_keep_one_contiguous_signed_chain(broker, tmp_path):
    rec = Recorder(broker.port, topic="shoe/T1/casino/events").start()
    journal, pub = publisher(tmp_path, broker.url, release="per_card", display_feed=False)
    pub.start()

    def worker(n: int) -> None:
        for i in range(40):
            pub.append([{"type": "fault", "shoe": 1, "round": None, "kind": f"w{n}",
                         "detail": str(i)}])

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pub.flush(30)
    assert journal.last_seq == 160
    assert rec.wait_for(lambda r: len(r.on("events")) >= 160)
    envelopes = check_casino_feed(rec.on("events"), 160)
    for n in range(4):  # each thread's events in its own order
        mine = [int(e["event"]["detail"]) for _, e in sorted(envelopes.items())
                if e["event"]["kind"] == f"w{n}"]
        assert mine == list(range(40))
    pub.stop()
    rec.stop()
    journal.close()


def test_unusable_tls_files_and_secrets_are_clear_errors(tmp_path):
    journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
    missing = str(tmp_path / "nope.pem")
    pub = Publisher(journal, MqttConfig(url="mqtts://127.0.0.1:1", ca_file=missing), "T1",
                    key=KEY)
    with pytest.raises(ValueError, match=r"mqtt TLS: cannot load ca_file=.*nope\.pem"):
        pub.start()
    pub.stop()
    p = Publisher(journal, MqttConfig(release="per_card"), "T1", key=KEY)
    (entry,) = p.append([{"type": "shoe_started", "shoe": 1, "decks": 8}])
    payload = journal._conn.execute(
        "SELECT payload FROM outbox WHERE seq = 1").fetchone()[0]
    assert verify_casino_payload(payload, KEY.public)["seq"] == entry.seq
    journal.close()


@pytest.mark.e2e
def test_never_more_in_flight_than_the_brokers_receive_maximum(tmp_path):
    broker = Mosquitto()
    broker.conf_path.write_text(broker.conf_path.read_text() + "max_inflight_messages 5\n")
    with broker:
        rec = Recorder(broker.port, topic="shoe/T1/casino/events").start()
        journal, pub = publisher(tmp_path, broker.url, release="per_card")
        pub.start()
        assert pub._link.wait_connected(10)
        assert pub._link.receive_maximum == 5
        seen: list[int] = []
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                seen.append(pub._sender.in_flight())
                time.sleep(0.0005)

        sampler = threading.Thread(target=sample)
        sampler.start()
        for batch in shoe_batches(6, max_rounds=15):
            pub.append(batch)
        assert pub.flush(30)
        done.set()
        sampler.join()
        assert 0 < max(seen) <= 4  # one slot left for the status message
        assert rec.wait_for(lambda r: len(r.on("events")) >= journal.last_seq)
        check_casino_feed(rec.on("events"), journal.last_seq)
        pub.stop()
        rec.stop()
        journal.close()


@pytest.mark.e2e
def test_the_link_writes_on_the_callers_thread_and_its_thread_finishes_big_messages(broker):
    from shoe_controller.publish.mqtt import MqttLink
    from shoe_controller.publish.topics import Topics

    acks: list[tuple[int, bool]] = []
    link = MqttLink(MqttConfig(url=broker.url), Topics("shoe", "T1"),
                    on_ack=lambda mid, ok, why: acks.append((mid, ok)))
    rec = Recorder(broker.port, topic="shoe/T1/casino/events").start()
    link.start()
    try:
        assert link.wait_connected(10)
        small = link.publish("shoe/T1/casino/events", b'{"n":1}', retain=False)
        # Written to the socket before publish() returned: nothing waits for a thread.
        assert not link._client.want_write()
        # More than a socket buffer takes at once: the network thread writes the rest.
        big_payload = b'{"n":"' + b"7" * 4_000_000 + b'"}'
        big = link.publish("shoe/T1/casino/events", big_payload, retain=False)
        eventually(lambda: {small, big} <= {mid for mid, ok in acks if ok}, 20,
                   "PUBACKs of both messages")
        assert rec.wait_for(lambda r: len(r.on("events")) == 2)
        assert rec.on("events") == [b'{"n":1}', big_payload]
    finally:
        link.stop()
        rec.stop()


@pytest.mark.e2e
def test_a_hung_broker_never_blocks_the_game_and_loses_nothing(broker, tmp_path):
    """The broker process stops answering (SIGSTOP) but its connection stays open: the
    MQTT client cannot tell it from a slow one. Appends must go on at disk speed (the
    messages wait in paho's window and the outbox) and all arrive once it wakes up."""
    import signal

    rec = Recorder(broker.port, topic="shoe/T1/casino/events").start()
    journal, pub = publisher(tmp_path, broker.url, release="per_card", max_inflight=20)
    pub.start()
    assert pub._link.wait_connected(10)
    pid = broker._proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        slowest = 0.0
        for batch in shoe_batches(44, max_rounds=30):
            t0 = time.monotonic()
            pub.append(batch)
            slowest = max(slowest, time.monotonic() - t0)
        held = pub.pending()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert held > 20, "the hung broker held nothing back: the test is not testing"
    assert slowest < 1.0, f"an append waited {slowest:.2f} s on the hung broker"
    assert pub.flush(60), f"{pub.pending()} messages never acknowledged"
    assert rec.wait_for(lambda r: len({json.loads(p)["seq"] for p in r.on("events")})
                        >= journal.last_seq)
    check_casino_feed(rec.on("events"), journal.last_seq)
    pub.stop()
    rec.stop()
    journal.close()
