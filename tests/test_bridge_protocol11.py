"""Protocol 1.1 (firmware_bridge/PROTOCOL.md): every case of issue 17's "shoe link" list,
each against the reference device simulator on a pty AND against ``RawShoe`` (an
independent device written from the spec, raw bytes on a pty: tests/support/rawshoe.py).

Expected outcomes are the spec's rules, written out here by hand (§7a pairing, §2 sizes,
§3 type vs flag, §7 bounded gaps, §9a keepalive), never taken from the code under test.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from typing import Any

import pytest

from firmware_bridge.config import SerialConfig
from firmware_bridge.events import BridgeFault, ButtonPressed, CardExit, LinkUp
from firmware_bridge.framing import MAX_ENCODED, MAX_PAYLOAD, MIN_ENCODED, FrameDecoder
from firmware_bridge.link import Link
from firmware_bridge.protocol import CardReadReport
from firmware_bridge.simulator import DeviceSimulator
from shoe_controller.daemon_inputs import SerialInput
from shoe_controller.game.cards import parse_card
from shoe_controller.game.inputs import CardSeen, Fault, UnreadableCard
from shoe_controller.vision.barcode import BarcodeMapping
from shoe_controller.vision.config import BarcodeConfig
from tests.support.rawshoe import RawShoe, frame, payload

pytestmark = pytest.mark.timeout(60)

FAST = dict(heartbeat_timeout=0.3, handshake_timeout=0.2, ack_timeout=0.05,
            reconnect_initial=0.02, reconnect_max=0.1, reorder_window=0.01,
            poll_interval=0.005, replay_retries=4)
FAST_RETRIES = 4


def card(code: str) -> CardSeen:
    return CardSeen(parse_card(code), None, "scanner")


class Inputs:
    """A SerialInput on ``port`` whose game inputs are collected (the daemon's side)."""

    def __init__(self, port: str, **kw: Any) -> None:
        self.q: queue.Queue[tuple[Any, str]] = queue.Queue()
        self.serial = SerialInput(SerialConfig(port=port, exclusive=False, **{**FAST, **kw}),
                                  mapping=BarcodeMapping(BarcodeConfig()))
        self.serial.start(lambda inp, origin: self.q.put((inp, origin)))
        assert self.serial.link_up.wait(5)

    def take(self, n: int, timeout: float = 3.0) -> list[Any]:
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < n:
            try:
                out.append(self.q.get(timeout=max(0.0, deadline - time.monotonic()))[0])
            except queue.Empty:
                raise AssertionError(f"{len(out)} of {n} inputs: {out}") from None
        return out

    def quiet(self, wait: float = 0.3) -> list[Any]:
        time.sleep(wait)
        out = []
        while not self.q.empty():
            out.append(self.q.get_nowait()[0])
        return out

    def stop(self) -> None:
        self.serial.stop()


@pytest.fixture
def sim() -> Iterator[DeviceSimulator]:
    with DeviceSimulator(heartbeat_interval=0.05) as s:
        yield s


@pytest.fixture
def raw() -> Iterator[RawShoe]:
    with RawShoe() as r:
        yield r


@pytest.fixture
def sim_in(sim: DeviceSimulator) -> Iterator[Inputs]:
    inputs = Inputs(sim.path)
    yield inputs
    inputs.stop()


@pytest.fixture
def raw_in(raw: RawShoe) -> Iterator[Inputs]:
    inputs = Inputs(raw.path)
    yield inputs
    inputs.stop()


# ---------------------------------------------------------------- §7a exit / read pairing
UNREAD = UnreadableCard("card exit without a scanner read within 0.5 s")


def test_exit_then_read_in_the_window_is_one_card_sim(sim: DeviceSimulator,
                                                      sim_in: Inputs) -> None:
    t = sim.clock_us()
    sim.card_exit()
    sim.emit(CardReadReport(t + 450_000, 1, b"D1-QH"))  # 0.45 s late: inside 0.5 s
    assert sim_in.take(1) == [card("QH")]
    assert sim_in.quiet() == []


def test_exit_then_read_in_the_window_is_one_card_raw(raw: RawShoe, raw_in: Inputs) -> None:
    t = raw.clock_us()
    raw.card_exit(t)
    raw.card_read(b"D1-9S", t + 450_000)
    assert raw_in.take(1) == [card("9S")]
    assert raw_in.quiet() == []


def test_a_late_read_is_flagged_not_dealt_sim(sim: DeviceSimulator, sim_in: Inputs) -> None:
    t = sim.clock_us()
    sim.card_exit()
    sim.emit(CardReadReport(t + 600_000, 1, b"D1-QH"))
    assert sim_in.take(2) == [
        UNREAD, UnreadableCard("scanner read 'D1-QH' without a card exit: not dealt")]


def test_a_read_before_its_exit_is_flagged_not_dealt_raw(raw: RawShoe, raw_in: Inputs) -> None:
    t = raw.clock_us()
    raw.card_read(b"D1-QH", t)
    raw.card_exit(t + 10_000)
    got = raw_in.take(2)
    assert got == [UnreadableCard("scanner read 'D1-QH' without a card exit: not dealt"),
                   UNREAD]  # the exit's read never came: the heartbeat clock says so


def test_two_reads_for_one_exit_deal_one_card_and_a_fault_sim(sim: DeviceSimulator,
                                                              sim_in: Inputs) -> None:
    sim.card_exit()
    sim.card_read("D1-QH")
    sim.card_read("D1-QH")
    got = sim_in.take(2)
    assert got[0] == card("QH")
    assert isinstance(got[1], Fault) and got[1].kind == "duplicate_read"
    assert sim_in.quiet() == []


def test_two_different_reads_for_one_exit_raw(raw: RawShoe, raw_in: Inputs) -> None:
    raw.card_exit()
    raw.card_read(b"D1-QH")
    raw.card_read(b"D1-3C")
    assert raw_in.take(2) == [card("QH"), UnreadableCard(
        "second scanner read 'D1-3C' for one card exit (the first was 'D1-QH'): not dealt")]


def test_a_read_without_an_exit_is_not_dealt_sim(sim: DeviceSimulator, sim_in: Inputs) -> None:
    sim.card_read("D1-QH")
    assert sim_in.take(1) == [
        UnreadableCard("scanner read 'D1-QH' without a card exit: not dealt")]


def test_a_read_without_an_exit_is_not_dealt_raw(raw: RawShoe, raw_in: Inputs) -> None:
    raw.card_read(b"D1-KD")
    assert raw_in.take(1) == [
        UnreadableCard("scanner read 'D1-KD' without a card exit: not dealt")]


def test_an_exit_without_a_read_is_unreadable_by_the_device_clock_sim(
        sim: DeviceSimulator, sim_in: Inputs) -> None:
    sim.card_exit()  # nothing else: only heartbeats follow
    t0 = time.monotonic()
    assert sim_in.take(1) == [UNREAD]
    assert time.monotonic() - t0 >= 0.45  # not before the device's clock passed 0.5 s


def test_an_exit_without_a_read_is_unreadable_by_the_device_clock_raw(
        raw: RawShoe, raw_in: Inputs) -> None:
    t = raw.clock_us()
    raw.card_exit(t)
    raw.heartbeat(t + 499_000)  # inside the window: nothing yet
    assert raw_in.quiet(0.1) == []
    raw.heartbeat(t + 501_000)  # every event delivered and the window is past
    assert raw_in.take(1) == [UNREAD]


def test_the_window_is_not_judged_while_a_gap_is_open_raw(raw: RawShoe,
                                                          raw_in: Inputs) -> None:
    """A read lost on the wire and replayed pairs by its own t_us: the heartbeat that
    says the read exists (high-water mark) does not time the exit out."""
    t = raw.clock_us()
    raw.card_exit(t)
    raw.card_read(b"D1-2H", t + 30_000, send=False)  # lost on the wire; kept for replay
    raw.heartbeat(t + 900_000)
    assert raw_in.take(1) == [card("2H")]
    assert raw_in.quiet() == []


def test_a_replay_after_a_stall_pairs_as_live_sim(sim: DeviceSimulator,
                                                  sim_in: Inputs) -> None:
    sim.stall()
    sim.card_exit()
    sim.card_read("D1-7D")  # recorded, not sent
    time.sleep(0.8)  # more than the window on the host's clock; the link goes down
    sim.unstall()
    got = [x for x in sim_in.take(2, timeout=5) if not isinstance(x, Fault)]
    got += [x for x in sim_in.quiet(0.6) if not isinstance(x, Fault)]
    assert got == [card("7D")]


def test_an_exit_delivered_before_a_stall_pairs_with_the_read_replayed_after_sim(
        sim: DeviceSimulator, sim_in: Inputs) -> None:
    sim.card_exit()
    time.sleep(0.05)
    sim.stall()
    sim.card_read("D1-8H")  # recorded while the firmware's sender hangs
    time.sleep(0.8)
    sim.unstall()
    got = [x for x in sim_in.take(2, timeout=5) if not isinstance(x, Fault)]
    got += [x for x in sim_in.quiet(0.6) if not isinstance(x, Fault)]
    assert got == [card("8H")]


def test_a_reboot_leaves_a_pending_exit_unread_raw(raw: RawShoe, raw_in: Inputs) -> None:
    raw.card_exit()
    raw.reboot(0xB007)
    assert raw_in.take(1) == [UNREAD]


def test_a_shoe_without_an_exit_sensor_deals_each_read_raw() -> None:
    with RawShoe(capabilities=0x7F & ~0x01) as shoe:
        inputs = Inputs(shoe.path)
        try:
            shoe.card_read(b"D1-4S")
            assert inputs.take(1) == [card("4S")]
            assert inputs.quiet() == []
        finally:
            inputs.stop()


def test_a_1_0_device_that_sends_exit_then_read_still_deals() -> None:
    with DeviceSimulator(protocol=(1, 0), heartbeat_interval=0.05) as sim:
        inputs = Inputs(sim.path)
        try:
            for code in ("QH", "9S", "2C"):
                sim.card_exit()
                sim.card_read(f"D1-{code}")
            assert inputs.take(3) == [card("QH"), card("9S"), card("2C")]
        finally:
            inputs.stop()


# ---------------------------------------------------------------- the raw link harness
class LinkQ:
    """A bare Link on ``port`` and what it queues."""

    def __init__(self, port: str, **kw: Any) -> None:
        self.q: queue.Queue[Any] = queue.Queue()
        self.link = Link(SerialConfig(port=port, exclusive=False, **{**FAST, **kw}), self.q)
        self.link.start()
        self.link.wait_up(5)
        assert isinstance(self.q.get(timeout=2), LinkUp)

    def until(self, pred: Any, timeout: float = 3.0) -> list[Any]:
        """Everything queued up to and including the first item ``pred`` accepts."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"not within {timeout} s; got {out}, "
                                     f"stats {self.link.stats}") from None
            out.append(item)
            if pred(item):
                return out

    def quiet(self, wait: float = 0.3) -> list[Any]:
        time.sleep(wait)
        out = []
        while not self.q.empty():
            out.append(self.q.get_nowait())
        return out


@pytest.fixture
def sim_link(sim: DeviceSimulator) -> Iterator[LinkQ]:
    lq = LinkQ(sim.path)
    yield lq
    lq.link.stop()


@pytest.fixture
def raw_link(raw: RawShoe) -> Iterator[LinkQ]:
    lq = LinkQ(raw.path)
    yield lq
    lq.link.stop()


def is_exit(seq: int) -> Any:
    return lambda e: isinstance(e, CardExit) and e.seq == seq


def lost(items: list[Any]) -> list[str]:
    return [e.detail for e in items if isinstance(e, BridgeFault) and e.name == "events_lost"]


# ---------------------------------------------------------------- §2 sizes
def test_size_limits_are_exact() -> None:
    """§2 with the independent encoder: 512-byte payload in, 513 out; 10 decoded bytes
    (header + CRC) in, 9 out; the largest encoded frame is 519 bytes."""
    dec = FrameDecoder()
    biggest = payload(0x3C, 2, 7, b"\x01" * (512 - 6))
    assert len(frame(biggest)) - 1 == 519  # delimiter excluded
    assert dec.feed(frame(biggest)) == [biggest]
    too_big = payload(0x3C, 2, 8, b"\x01" * (513 - 6))
    assert len(frame(too_big)) - 1 == 520
    # 513 bytes with zeros in it stuff into 518 bytes: still over the limit once decoded
    zeros = payload(0x3C, 2, 9, (b"\x01" * 99 + b"\x00") * 5 + b"\x01" * 7)
    assert len(zeros) == 513 and len(frame(zeros)) - 1 <= 519
    smallest = payload(0x02, 0, 0, b"")
    assert len(frame(smallest)) - 1 == 11
    nine = frame(smallest[:5])
    assert dec.feed(frame(too_big)) == []
    assert dec.feed(frame(zeros)) == []
    assert dec.feed(nine) == []
    assert dec.feed(frame(smallest)) == [smallest]
    assert (dec.stats.oversize, dec.stats.short, dec.stats.frames) == (2, 1, 2)
    assert (MAX_ENCODED, MIN_ENCODED, MAX_PAYLOAD) == (519, 11, 512)


def test_an_oversize_event_is_reported_once_and_does_not_stall_sim(
        sim: DeviceSimulator, sim_link: LinkQ) -> None:
    sim.card_exit()
    t0 = time.monotonic()
    sim.oversize_event(513)  # seq 2, re-sent as it is by every replay
    sim.card_exit()
    got = sim_link.until(is_exit(3))
    assert time.monotonic() - t0 < 3.0  # not ~10 s (about 0.2 s with these settings)
    assert [e.seq for e in got if isinstance(e, CardExit)] == [1, 3]
    (detail,) = lost(got)
    assert "1 device event(s) between seq 2 and 2" in detail and "invalid frame" in detail
    assert sim_link.link.stats["replays_requested"] <= FAST_RETRIES
    assert lost(sim_link.quiet()) == []
    assert sim_link.link.is_up and sim_link.link.stats["oversize"] >= 1


def test_an_oversize_event_is_reported_once_and_does_not_stall_raw(
        raw: RawShoe, raw_link: LinkQ) -> None:
    raw.card_exit()
    raw.event(0x3C, b"\x5a" * (513 - 6))  # seq 2: 513 bytes, replayed as it is
    raw.card_exit()
    got = raw_link.until(is_exit(3))
    assert [e.seq for e in got if isinstance(e, CardExit)] == [1, 3]
    assert len(lost(got)) == 1 and "between seq 2 and 2" in lost(got)[0]
    assert len(raw.replays) <= FAST_RETRIES
    time.sleep(0.3)
    assert len(raw.replays) <= FAST_RETRIES and lost(raw_link.quiet(0)) == []


# ---------------------------------------------------------------- §3 type decides
def test_an_event_without_the_flag_is_delivered_and_reported_sim(
        sim: DeviceSimulator, sim_link: LinkQ) -> None:
    sim.strip_flag_next(2)
    sim.press("confirm")
    sim.press("new_round")
    sim.card_exit()
    got = sim_link.until(is_exit(3))
    buttons = [(e.seq, e.button) for e in got if isinstance(e, ButtonPressed)]
    assert buttons == [(1, "confirm"), (2, "new_round")]
    faults = [e for e in got if isinstance(e, BridgeFault) and e.name == "flag_mismatch"]
    assert len(faults) == 1 and "button event (type 0x05) without" in faults[0].detail
    assert sim_link.link.stats["flag_mismatches"] == 2


def test_an_event_without_the_flag_is_delivered_and_reported_raw(
        raw: RawShoe, raw_link: LinkQ) -> None:
    raw.button(2, flags=0)
    raw.card_exit()
    got = raw_link.until(is_exit(2))
    assert [(e.seq, e.button) for e in got if isinstance(e, ButtonPressed)] == [(1, "confirm")]
    assert [e.name for e in got if isinstance(e, BridgeFault)] == ["flag_mismatch"]


def test_a_flagged_heartbeat_does_not_consume_a_sequence_number_sim(
        sim: DeviceSimulator, sim_link: LinkQ) -> None:
    sim.drop_next(1)
    sim.flag_heartbeats(3)
    sim.card_exit()  # seq 1, lost on the wire; flagged heartbeats say seq 1
    got = sim_link.until(is_exit(1))
    assert [e.name for e in got if isinstance(e, BridgeFault)] == ["flag_mismatch"]
    assert "heartbeat frame (type 0x02, not an event) with" in got[0].detail
    sim.card_exit()
    assert sim_link.until(is_exit(2))[-1].seq == 2
    assert lost(sim_link.quiet(0)) == []


def test_a_flagged_heartbeat_does_not_consume_a_sequence_number_raw(
        raw: RawShoe, raw_link: LinkQ) -> None:
    raw.heartbeat_flags = 0x02
    raw.card_exit(send=False)  # seq 1 never sent live; the flagged heartbeats carry seq 1
    got = raw_link.until(is_exit(1))  # replayed, delivered: not taken by a heartbeat
    assert "flag_mismatch" in [e.name for e in got if isinstance(e, BridgeFault)]
    assert lost(got) == []


# ---------------------------------------------------------------- §7 bounded gaps
def test_a_gap_the_device_can_never_fill_is_reported_lost_sim(
        sim: DeviceSimulator, sim_link: LinkQ) -> None:
    sim.card_exit()
    sim.lose_next(1)
    sim.card_exit()  # seq 2: never sent, never replayed, still "in" the buffer
    sim.card_exit()
    got = sim_link.until(is_exit(3))
    assert [e.seq for e in got if isinstance(e, CardExit)] == [1, 3]
    (detail,) = lost(got)
    assert f"between seq 2 and 2 were lost: not received after {FAST_RETRIES} replay" in detail
    asked = sim_link.link.stats["replays_requested"]
    assert asked == FAST_RETRIES
    time.sleep(0.3)
    assert sim_link.link.stats["replays_requested"] == asked and sim_link.link.is_up


def test_a_lost_last_event_the_device_can_never_send_is_reported_raw(
        raw: RawShoe, raw_link: LinkQ) -> None:
    raw.card_exit()
    seq = raw.card_exit(send=False)
    raw.forget.add(seq)  # heartbeats say seq 2 exists; no replay ever brings it
    got = raw_link.until(lambda e: isinstance(e, BridgeFault))
    assert lost(got) == [lost(got)[0]] and "between seq 2 and 2" in lost(got)[0]
    n = len(raw.replays)
    assert n == FAST_RETRIES
    time.sleep(0.3)
    assert len(raw.replays) == n  # no asking 50 times a second forever
    raw.card_exit()
    assert raw_link.until(is_exit(3))[-1].seq == 3


def test_a_reboot_with_an_open_gap_reports_the_missing_events_sim(
        sim: DeviceSimulator, sim_link: LinkQ) -> None:
    sim.ignore_replays(100)
    sim.drop_next(1)
    sim.card_exit()  # seq 1: dropped, and the replays asking for it are ignored
    sim.card_exit()  # seq 2: held by the host behind the gap
    time.sleep(0.05)
    sim.reboot()
    got = sim_link.until(lambda e: isinstance(e, LinkUp))
    assert [e.seq for e in got if isinstance(e, CardExit)] == [2]
    assert lost(got) == ["1 device event(s) between seq 1 and 2 were lost: the shoe "
                         "restarted before it could replay them"]
    assert got[-1].restarted
    sim.card_exit()
    assert sim_link.until(is_exit(1))[-1].seq == 1  # the new boot from 1


def test_a_reboot_with_an_open_gap_reports_the_missing_events_raw(
        raw: RawShoe, raw_link: LinkQ) -> None:
    raw.card_exit()
    for _ in range(2):
        raw.forget.add(raw.card_exit(send=False))
    raw.heartbeat()
    time.sleep(0.03)
    raw.reboot(0xBEEF)
    got = raw_link.until(lambda e: isinstance(e, LinkUp))
    assert lost(got) == ["2 device event(s) between seq 2 and 3 were lost: the shoe "
                         "restarted before it could replay them"]


# ---------------------------------------------------------------- §8/§9a lights, keepalive, reset
KEEP = dict(keepalive_interval=0.05, keepalive_timeout=0.3)


def wait_until(pred: Any, timeout: float = 3.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.01)


def test_lights_are_set_at_link_up_and_on_a_change_sim(sim: DeviceSimulator) -> None:
    inputs = Inputs(sim.path, lights=70)
    try:
        wait_until(lambda: sim.brightness == 70, what="lights at link-up")
        inputs.serial.set_lights(35)
        wait_until(lambda: sim.brightness == 35, what="lights after a change")
        sim.reboot()  # the firmware boots dark: the host says it again
        wait_until(lambda: sim.brightness == 35, what="lights after a reboot")
    finally:
        inputs.stop()


def test_lights_are_set_at_link_up_raw(raw: RawShoe) -> None:
    inputs = Inputs(raw.path, lights=60)
    try:
        wait_until(lambda: raw.commands(0x83) == [bytes([60])], what="set_lights(60)")
        raw.brightness = 10  # someone else changed it: the heartbeat shows it
        wait_until(lambda: raw.brightness == 60, what="lights put back")
    finally:
        inputs.stop()


def test_keepalives_are_sent_to_a_1_1_device_raw(raw: RawShoe) -> None:
    lq = LinkQ(raw.path, **KEEP)
    try:
        time.sleep(0.5)
        bodies = raw.commands(0x88)
        assert 3 <= len(bodies) <= 12  # every 0.05 s (fewer only on a starved machine)
        assert set(bodies) == {(300).to_bytes(2, "little")}  # timeout_ms
        assert [f for t, _, f, _ in ((t, fl, s, b) for t, fl, s, b in raw.received)
                if t == 0x88 and f != 0] == []  # seq 0, never acknowledged
    finally:
        lq.link.stop()


def test_no_keepalive_to_a_1_0_device_raw() -> None:
    with RawShoe(protocol=(1, 0)) as shoe:
        lq = LinkQ(shoe.path, **KEEP)
        try:
            time.sleep(0.4)
            assert shoe.commands(0x88) == []
        finally:
            lq.link.stop()


def test_the_device_locks_itself_when_the_host_is_gone_sim(sim: DeviceSimulator) -> None:
    lq = LinkQ(sim.path, **KEEP)
    time.sleep(0.2)
    assert not sim.locked
    lq.link.stop()  # the host dies
    t0 = time.monotonic()
    wait_until(lambda: sim.locked, timeout=2, what="the device's own lock")
    # not before the 0.3 s timeout; the upper bound only allows for a loaded machine
    assert 0.25 < time.monotonic() - t0 < 3.0 and sim.self_locked
    lq = LinkQ(sim.path, **KEEP)  # a host again: the lock stays until it says otherwise
    try:
        time.sleep(0.2)
        assert sim.locked
        lq.link.set_lock(False)
        assert not sim.locked
    finally:
        lq.link.stop()


def test_a_1_0_device_is_not_sent_keepalives_and_never_locks_itself() -> None:
    with DeviceSimulator(protocol=(1, 0), heartbeat_interval=0.05) as sim:
        lq = LinkQ(sim.path, **KEEP)
        time.sleep(0.2)
        lq.link.stop()
        time.sleep(0.5)
        assert not sim.locked
        assert [m for m in sim.received if type(m).__name__ == "Keepalive"] == []


def test_reset_clears_a_latched_fault_only_on_the_supervisors_command_sim(
        sim: DeviceSimulator, sim_in: Inputs) -> None:
    sim.fault("lock_jammed", "lock stuck")
    (fault,) = sim_in.take(1)
    assert fault == Fault("firmware_fault", "lock_jammed: lock stuck")
    time.sleep(0.3)
    assert sim.fault_code == 4  # latched: nothing clears it by itself
    handlers = sim_in.serial.handlers()
    assert handlers["reset"]([], None) == "ok: the shoe's latched fault was cleared"
    assert sim.fault_code == 0
    assert handlers["lights"](["150"], None) == "error: lights: 150 is not a percentage 0-100"


def test_reset_on_the_control_socket_raw(raw: RawShoe, raw_in: Inputs, tmp_path: Any) -> None:
    import socket

    from shoe_controller.control import ControlSocketInput

    path = str(tmp_path / "control")
    control = ControlSocketInput(path, handlers=raw_in.serial.handlers())
    control.start(lambda inp, origin, **kw: None)

    def ctl(line: str) -> bytes:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(3)
            s.connect(path)
            s.sendall(line.encode() + b"\n")
            out = b""
            while chunk := s.recv(512):
                out += chunk
            return out.strip()

    try:
        assert ctl("reset") == b"ok: the shoe's latched fault was cleared"
        assert raw.commands(0x86) == [b"\x00"]  # reset(reboot=false)
        assert ctl("lights 45") == b"ok: shoe lights 45%"
        wait_until(lambda: raw.brightness == 45, what="lights 45")
        assert ctl("lights bright").startswith(b"error: lights needs a percentage")
    finally:
        control.stop()


# ---------------------------------------------------------------- resume refused
def test_resume_refusal_rule() -> None:
    from shoe_controller.game.shoe_link import ShoeLink, resume_refusal

    # the rule, by hand: allowed only with the link up and the lock known (or absent)
    for up in (True, False):
        for lock in ("engaged", "released", "unknown", "none"):
            allowed = up and lock != "unknown"
            assert (resume_refusal(ShoeLink(up, lock)) is None) == allowed, (up, lock)


def test_shoe_link_state_follows_the_link_and_the_lock_sim(sim: DeviceSimulator,
                                                          sim_in: Inputs) -> None:
    serial = sim_in.serial
    serial.set_lock(False)
    wait_until(lambda: serial.shoe_link().lock == "released", what="lock acknowledged")
    serial.set_lock(True)  # a pause: the lock state stays known while the command flies
    assert serial.shoe_link().lock == "released"
    wait_until(lambda: serial.shoe_link().lock == "engaged", what="lock acknowledged")
    assert serial.shoe_link().up and sim.locked
    sim.unplug()
    wait_until(lambda: not serial.shoe_link().up, what="link down")
    assert serial.shoe_link().lock == "unknown"
    sim.ignore_commands(100)  # back, but the shoe does not acknowledge the lock yet
    sim.replug()
    wait_until(lambda: serial.link.is_up, what="link up")
    time.sleep(0.2)
    assert serial.shoe_link().lock == "unknown"
    sim.ignore_commands(-sim._ignore_commands)
    wait_until(lambda: serial.shoe_link().lock == "engaged", what="lock known again")


def test_the_daemon_refuses_resume_while_the_link_is_down_sim(sim: DeviceSimulator,
                                                             tmp_path: Any) -> None:
    """The whole path: a round paused by a lost link stays paused on a resume (journaled
    refusal naming why), until the link is back and the shoe acknowledged the lock."""
    from shoe_controller.game.inputs import Resume
    from tests.test_daemon import Running, new_daemon, wait

    serial = SerialInput(SerialConfig(port=sim.path, exclusive=False, **FAST),
                         mapping=BarcodeMapping(BarcodeConfig()))
    daemon = new_daemon(tmp_path / "j.sqlite3", sources=[serial])
    run = Running(daemon)

    def faults() -> list[tuple[str, str]]:
        return [(e.data["kind"], e.data.get("detail", "")) for e in daemon.journal.replay()
                if e.type == "fault"]

    def types() -> list[str]:
        return [e.type for e in daemon.journal.replay()]

    try:
        assert serial.link_up.wait(10)
        sim.shoe_loaded()
        for code in ("D1-2D", "D1-9S", "D1-9C", "D1-2H"):  # indicator 2, burn 2, round 1
            sim.card_exit()
            sim.card_read(code)
        wait(lambda: "card_dealt" in types(), "a card of round 1")
        sim.unplug()
        wait(lambda: "round_paused" in types(), "the pause for the lost link")
        daemon.submit(Resume(), "supervisor")
        wait(lambda: any(k == "resume_refused" for k, _ in faults()), "the refusal")
        detail = next(d for k, d in faults() if k == "resume_refused")
        assert "the link to the shoe is down" in detail
        assert "round_resumed" not in types()
        sim.replug()
        wait(lambda: serial.shoe_link().lock == "engaged", "the lock acknowledged again")
        assert sim.locked  # paused: the host re-asserted the lock at link-up
        daemon.submit(Resume(), "supervisor")
        wait(lambda: "round_resumed" in types(), "the resume once the link is back")
        wait(lambda: not sim.locked, "the lock released on resume")
    finally:
        run.stop()
        daemon.close()


def test_a_read_before_its_exit_is_flagged_not_dealt_sim(sim: DeviceSimulator,
                                                         sim_in: Inputs) -> None:
    sim.card_read("D1-QH")
    sim.card_exit()
    assert sim_in.take(2) == [
        UnreadableCard("scanner read 'D1-QH' without a card exit: not dealt"), UNREAD]


def test_two_same_reads_for_one_exit_raw(raw: RawShoe, raw_in: Inputs) -> None:
    raw.card_exit()
    raw.card_read(b"D1-5H")
    raw.card_read(b"D1-5H")
    got = raw_in.take(2)
    assert got[0] == card("5H") and got[1].kind == "duplicate_read"
    assert raw_in.quiet() == []


def test_the_lock_state_raw(raw: RawShoe, raw_in: Inputs) -> None:
    serial = raw_in.serial
    serial.set_lock(True)
    wait_until(lambda: serial.shoe_link().lock == "engaged", what="lock acknowledged")
    assert raw.locked and raw.commands(0x84)[-1] == b"\x01"
    raw.locked = False  # the shoe reports another state: the host says it again
    wait_until(lambda: raw.locked, what="the lock re-asserted")


def test_keepalive_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="at least twice keepalive_interval"):
        SerialConfig(keepalive_interval=0.5, keepalive_timeout=0.8)
    assert SerialConfig(keepalive_timeout=0).keepalive_timeout == 0


def test_a_shoe_without_lock_or_lights_is_not_sent_them_raw() -> None:
    with RawShoe(capabilities=0x7F & ~(1 << 5) & ~(1 << 6)) as shoe:
        inputs = Inputs(shoe.path)
        try:
            inputs.serial.set_lock(True)
            time.sleep(0.4)
            assert shoe.commands(0x83) == [] and shoe.commands(0x84) == []
            assert inputs.serial.shoe_link().lock == "none"  # resume is not held up
        finally:
            inputs.stop()


def test_resume_refusal_says_why_and_what_to_do() -> None:
    """The supervisor reads these words (docs/daemon.md: ``refused: resume refused: ...``):
    what is wrong and what to do, word for word (issue 15's campaign)."""
    from shoe_controller.game.shoe_link import ShoeLink, resume_refusal

    down = ("resume refused: the link to the shoe is down (cards dealt now would not be "
            "seen); wait for it to come back")
    unconfirmed = ("resume refused: the shoe has not confirmed its draw lock since the link "
                   "came back; try again in a moment")
    for lock in ("engaged", "released", "unknown", "none"):
        assert resume_refusal(ShoeLink(False, lock)) == down
    assert resume_refusal(ShoeLink(True, "unknown")) == unconfirmed
