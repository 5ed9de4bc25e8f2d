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
from firmware_bridge.protocol import CardReadReport
from firmware_bridge.simulator import DeviceSimulator
from shoe_controller.daemon_inputs import SerialInput
from shoe_controller.game.cards import parse_card
from shoe_controller.game.inputs import CardSeen, Fault, UnreadableCard
from shoe_controller.vision.barcode import BarcodeMapping
from shoe_controller.vision.config import BarcodeConfig
from tests.support.rawshoe import RawShoe

pytestmark = pytest.mark.timeout(60)

FAST = dict(heartbeat_timeout=0.3, handshake_timeout=0.2, ack_timeout=0.05,
            reconnect_initial=0.02, reconnect_max=0.1, reorder_window=0.01,
            poll_interval=0.005)


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
