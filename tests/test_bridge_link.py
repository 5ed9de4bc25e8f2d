"""The Link against the device simulator over a real pty: reconnects, stalls, lost,
duplicated and reordered frames, command retries, version mismatch."""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest

from firmware_bridge.config import SerialConfig
from firmware_bridge.events import (
    BridgeFault,
    ButtonPressed,
    CardExit,
    CardRead,
    LidChanged,
    LinkDown,
    LinkUp,
    ShoeEmpty,
    ShoeLoaded,
)
from firmware_bridge.link import (
    CommandRejected,
    CommandTimeout,
    Link,
    LinkDownError,
    LinkError,
    ProtocolVersionError,
)
from firmware_bridge.protocol import Message, SetLights, SetLock
from firmware_bridge.simulator import DeviceSimulator

pytestmark = pytest.mark.timeout(60)

#: short timeouts so every test stays well under a few seconds
FAST = dict(
    heartbeat_timeout=0.3,
    handshake_timeout=0.2,
    ack_timeout=0.05,
    command_retries=3,
    reconnect_initial=0.02,
    reconnect_max=0.1,
    reorder_window=0.01,
    poll_interval=0.005,
)


def fast_config(port: str, **kw: object) -> SerialConfig:
    return SerialConfig(port=port, **{**FAST, **kw})  # type: ignore[arg-type]


@pytest.fixture
def sim() -> Iterator[DeviceSimulator]:
    # These tests deal up to 500 cards/s (a shoe: about 1/s). A replay buffer of 1024
    # covers as much time at that pace as the default 64 does at a real one, so a reader
    # starved on a loaded machine never makes the stress tests lose events; the
    # overflow itself is tested with a buffer of 4.
    with DeviceSimulator(heartbeat_interval=0.05, replay_size=1024) as s:
        yield s


class Harness:
    def __init__(self, sim: DeviceSimulator, **kw: object) -> None:
        self.sim = sim
        self.q: queue.Queue[object] = queue.Queue()
        self.link = Link(fast_config(sim.path, **kw), self.q)

    def get(self, timeout: float = 3.0) -> object:
        return self.q.get(timeout=timeout)

    def wait_for(self, kind: type, timeout: float = 3.0) -> tuple[object, list[object]]:
        """The next event of ``kind``, and everything queued before it."""
        before = []
        deadline = time.monotonic() + timeout
        while True:
            ev = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
            if isinstance(ev, kind):
                return ev, before
            before.append(ev)

    def device_events(self, n: int, timeout: float = 3.0) -> list[object]:
        """The next ``n`` device events (link_up/link_down/link faults skipped)."""
        out: list[object] = []
        skipped: list[object] = []
        deadline = time.monotonic() + timeout
        while len(out) < n:
            try:
                ev = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                link = self.link
                raise AssertionError(
                    f"{len(out)} of {n} device events within {timeout} s: "
                    f"seqs {seqs(out)}, link events {skipped}, stats {link.stats}, "
                    f"expected {link._expected}, high water {link._high_water}, "
                    f"held {sorted(link._stash)}, device last seq {self.sim.last_seq}"
                ) from None
            if isinstance(ev, LinkUp | LinkDown) or (
                isinstance(ev, BridgeFault) and ev.source == "link"
            ):
                skipped.append(ev)
                continue
            out.append(ev)
        return out

    def quiet(self, wait: float = 0.1) -> list[object]:
        time.sleep(wait)
        out = []
        while True:
            try:
                out.append(self.q.get_nowait())
            except queue.Empty:
                return out


@pytest.fixture
def h(sim: DeviceSimulator) -> Iterator[Harness]:
    harness = Harness(sim)
    harness.link.start()
    harness.link.wait_up(timeout=5)
    up = harness.get()
    assert isinstance(up, LinkUp) and not up.restarted
    yield harness
    harness.link.stop()


def seqs(events: list[object]) -> list[int]:
    return [e.seq for e in events]  # type: ignore[attr-defined]


# ------------------------------------------------------------------ the happy path
def test_handshake_reports_the_device(h: Harness) -> None:
    info = h.link.device
    assert info is not None
    assert info.device_id == "SIM-0001"
    assert info.firmware == "1.0.0"
    assert info.protocol == (1, 1)
    assert {"card_exit", "card_read", "buttons", "lid", "lights", "lock"} <= info.capabilities
    assert h.link.is_up


def test_every_device_event_arrives_in_order_with_its_fields(h: Harness) -> None:
    sim = h.sim
    sim.card_exit(duration_us=41_000)
    sim.card_read("QH", symbology=1)
    sim.press("confirm")
    sim.lid(True)
    sim.lid(False)
    sim.shoe_empty()
    sim.shoe_loaded()
    sim.fault("exit_sensor_blocked", "gate blocked 3 s")
    evs = h.device_events(8)
    assert seqs(evs) == list(range(1, 9))
    exit_, read, button, lid_open, lid_closed, empty, loaded, fault = evs
    assert isinstance(exit_, CardExit) and exit_.duration_us == 41_000 and exit_.t_us > 0
    assert isinstance(read, CardRead) and read.text == "QH" and read.symbology == "code128"
    assert isinstance(button, ButtonPressed) and button.button == "confirm"
    assert isinstance(lid_open, LidChanged) and lid_open.open
    assert isinstance(lid_closed, LidChanged) and not lid_closed.open
    assert isinstance(empty, ShoeEmpty) and isinstance(loaded, ShoeLoaded)
    assert isinstance(fault, BridgeFault)
    assert (fault.source, fault.name, fault.detail) == (
        "device",
        "exit_sensor_blocked",
        "gate blocked 3 s",
    )
    assert exit_.t_us < read.t_us <= fault.t_us  # device clock
    assert exit_.rx_ns > 0


def test_events_from_before_the_link_started_are_not_replayed(sim: DeviceSimulator) -> None:
    sim.deal(3)
    harness = Harness(sim)
    with harness.link:
        harness.link.wait_up(5)
        sim.card_exit()
        assert isinstance(harness.get(), LinkUp)
        assert seqs(harness.device_events(1)) == [4]


# ------------------------------------------------------------------ commands
def test_commands_are_executed_and_acknowledged(h: Harness) -> None:
    h.link.set_lights(75)
    h.link.set_lock(True)
    assert h.sim.brightness == 75 and h.sim.locked
    assert h.link.ping() > 0
    h.sim.deal(2)
    h.sim.lid(True)
    h.sim.fault("lock_jammed")
    st = h.link.request_status()
    assert (st.brightness, st.locked, st.lid_open, st.cards_total, st.fault) == (
        75,
        True,
        True,
        2,
        "lock_jammed",
    )
    h.link.reset()  # clears the latched fault
    assert h.link.request_status().fault is None


def test_bad_arguments_are_refused(h: Harness) -> None:
    with pytest.raises(ValueError, match="0-100"):
        h.link.set_lights(150)
    with pytest.raises(CommandRejected, match="bad_argument"):
        h.link._command(SetLights(150))  # what the device says if asked anyway


def test_a_lost_command_is_retried(h: Harness) -> None:
    h.sim.ignore_commands(2)
    h.link.set_lock(True)
    assert h.sim.locked
    assert h.link.stats["command_retries"] == 2
    assert sum(isinstance(c, SetLock) for c in h.sim.received) == 3


def test_a_lost_ack_is_retried_without_executing_twice(h: Harness) -> None:
    h.sim.drop_acks(2)
    h.link.set_lights(30)
    assert h.sim.brightness == 30
    assert [c for c in h.sim.executed if isinstance(c, SetLights)] == [SetLights(30)]
    assert sum(isinstance(c, SetLights) for c in h.sim.received) == 3


def test_a_lost_status_reply_is_retried(h: Harness) -> None:
    h.link.set_lights(40)
    h.sim.drop_status(1)  # the ack arrives, the Status before it does not
    assert h.link.request_status().brightness == 40
    assert h.link.stats["command_retries"] == 1


def test_a_command_that_is_never_acked_times_out_then_the_link_still_works(h: Harness) -> None:
    h.sim.ignore_commands(4)  # 1 + command_retries attempts
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout, match="no ack from the shoe after 4 attempts"):
        h.link.set_lock(True)
    assert time.monotonic() - t0 < 1.0
    h.link.set_lock(True)
    assert h.sim.locked


def test_commands_while_the_link_is_down_fail_at_once(h: Harness) -> None:
    h.sim.unplug()
    h.wait_for(LinkDown)
    with pytest.raises(LinkDownError, match="down"):
        h.link.set_lights(10)


def test_reset_with_reboot_resynchronises(h: Harness) -> None:
    h.sim.deal(3)
    h.device_events(3)
    old_boot = h.link.device.boot_id  # type: ignore[union-attr]
    h.link.reset(reboot=True)
    up, _ = h.wait_for(LinkUp)
    assert up.restarted and up.device.boot_id != old_boot  # type: ignore[attr-defined]
    h.sim.deal(2)
    assert seqs(h.device_events(2)) == [1, 2]  # a new boot numbers from 1 again


# ------------------------------------------------------------------ reconnects
def test_unplug_and_replug_lose_and_duplicate_nothing(h: Harness) -> None:
    sim = h.sim
    sim.deal(3)
    assert seqs(h.device_events(3)) == [1, 2, 3]
    sim.unplug()
    down, _ = h.wait_for(LinkDown)
    assert "port lost" in down.reason  # type: ignore[attr-defined]
    sim.deal(4)  # cards dealt while the cable is out: kept in the replay buffer
    sim.press("confirm")
    time.sleep(0.15)  # a few failed reconnects
    sim.replug()
    up, _ = h.wait_for(LinkUp)
    assert not up.restarted  # type: ignore[attr-defined]
    sim.deal(2)
    evs = h.device_events(7)
    assert seqs(evs) == [4, 5, 6, 7, 8, 9, 10]
    assert isinstance(evs[4], ButtonPressed)
    assert h.quiet() == []
    assert h.link.stats["link_downs"] == 1


def test_repeated_unplugs_under_load(h: Harness) -> None:
    sim = h.sim
    dealer = sim.deal_in_background(60, pace=0.005)
    for _ in range(3):
        time.sleep(0.05)
        sim.unplug()
        time.sleep(0.05)
        sim.replug()
    dealer.join()
    evs = h.device_events(60, timeout=10)
    assert seqs(evs) == list(range(1, 61))
    time.sleep(0.2)
    assert [e for e in h.quiet() if isinstance(e, CardExit)] == []


def test_heartbeat_stall_brings_the_link_down_and_back(h: Harness) -> None:
    sim = h.sim
    sim.card_exit()
    assert seqs(h.device_events(1)) == [1]
    sim.stall()
    t0 = time.monotonic()
    down, _ = h.wait_for(LinkDown)
    assert "heartbeat timeout" in down.reason  # type: ignore[attr-defined]
    assert 0.2 < time.monotonic() - t0 < 1.5
    sim.deal(2)  # recorded while the firmware is hung
    time.sleep(0.1)
    sim.unstall()
    up, _ = h.wait_for(LinkUp)
    assert not up.restarted  # type: ignore[attr-defined]
    assert seqs(h.device_events(2)) == [2, 3]
    assert h.quiet() == []


def test_replay_buffer_overflow_is_reported_as_lost_events(sim: DeviceSimulator) -> None:
    sim.replay_size = 4
    sim.reboot()  # apply the smaller buffer
    harness = Harness(sim)
    with harness.link:
        harness.link.wait_up(5)
        sim.card_exit()
        harness.wait_for(LinkUp)
        assert seqs(harness.device_events(1)) == [1]
        sim.unplug()
        harness.wait_for(LinkDown)
        sim.deal(10)  # seq 2..11; the device keeps only 8..11
        sim.replug()
        harness.wait_for(LinkUp)
        fault, _ = harness.wait_for(BridgeFault)
        assert fault.name == "events_lost"  # type: ignore[attr-defined]
        assert "6 device event(s) between seq 2 and 7" in fault.detail  # type: ignore[attr-defined]
        assert seqs(harness.device_events(4)) == [8, 9, 10, 11]
        assert harness.link.stats["events_lost"] == 6


# ------------------------------------------------------------------ a bad line
def test_duplicated_frames_are_delivered_once(h: Harness) -> None:
    h.sim.duplicate_next(5)
    h.sim.deal(8)
    assert seqs(h.device_events(8)) == list(range(1, 9))
    assert h.quiet() == []
    assert h.link.stats["duplicates"] == 5


def test_reordered_frames_are_delivered_in_order(h: Harness) -> None:
    h.sim.reorder_next(3)
    h.sim.deal(8)
    assert seqs(h.device_events(8)) == list(range(1, 9))
    assert h.quiet() == []
    assert h.link.stats["out_of_order"] >= 3


def test_dropped_and_corrupted_frames_are_replayed(h: Harness) -> None:
    h.sim.drop_next(2)
    h.sim.deal(3)
    h.sim.corrupt_next(2)
    h.sim.deal(3)
    assert seqs(h.device_events(6)) == list(range(1, 7))
    assert h.quiet() == []
    assert h.link.stats["bad_crc"] + h.link.stats["cobs_errors"] >= 1
    assert h.link.stats["replays_requested"] >= 1


def test_a_lost_last_event_is_recovered_from_the_heartbeat(h: Harness) -> None:
    h.sim.drop_next(1)
    h.sim.card_exit()  # nothing follows it but heartbeats
    assert seqs(h.device_events(1, timeout=2)) == [1]


def test_garbage_between_frames_loses_nothing(h: Harness) -> None:
    for i in range(10):
        h.sim.garbage(os.urandom(1 + i * 7))
        h.sim.card_exit()
    assert seqs(h.device_events(10)) == list(range(1, 11))
    assert h.link.is_up


def test_everything_at_once(h: Harness) -> None:
    sim = h.sim
    dealer = sim.deal_in_background(100, pace=0.002)
    for i in range(20):
        [sim.drop_next, sim.duplicate_next, sim.reorder_next, sim.corrupt_next][i % 4]()
        sim.garbage(13)
        time.sleep(0.01)
    dealer.join()
    assert seqs(h.device_events(100, timeout=10)) == list(range(1, 101))
    assert [e for e in h.quiet(0.2) if isinstance(e, CardExit)] == []


class _FutureEvent(Message):
    """A device event type this host does not know (a newer firmware)."""

    TYPE: ClassVar[int] = 0x3C
    NAME: ClassVar[str] = "future"
    SEQUENCED: ClassVar[bool] = True


def test_unknown_event_types_are_counted_and_do_not_open_a_gap(h: Harness) -> None:
    h.sim.card_exit()
    h.sim.emit(_FutureEvent())
    h.sim.card_exit()
    assert seqs(h.device_events(2)) == [1, 3]
    assert h.link.stats["unknown_events"] == 1
    assert h.link.stats["replays_requested"] == 0


# ------------------------------------------------------------------ refusals
def test_version_mismatch_is_a_clear_error() -> None:
    with DeviceSimulator(protocol=(2, 0), firmware=(2, 3, 1), heartbeat_interval=0.05) as sim:
        harness = Harness(sim)
        with harness.link:
            with pytest.raises(ProtocolVersionError) as info:
                harness.link.wait_up(5)
            msg = str(info.value)
            assert "speaks protocol 2.0" in msg and "this host speaks 1.1" in msg
            assert "firmware 2.3.1" in msg and "Flash the shoe" in msg
            fault = harness.get()
            assert isinstance(fault, BridgeFault)
            assert (fault.source, fault.name) == ("link", "protocol_mismatch")
            assert fault.detail == msg
            time.sleep(0.3)  # it keeps retrying, but says so only once
            assert harness.quiet() == []
            assert not harness.link.is_up


def test_newer_minor_version_is_accepted() -> None:
    with DeviceSimulator(protocol=(1, 7), heartbeat_interval=0.05) as sim:
        harness = Harness(sim)
        with harness.link:
            assert harness.link.wait_up(5).protocol == (1, 7)


def test_exclusive_access(h: Harness) -> None:
    other = Harness(h.sim)
    with other.link:
        with pytest.raises(LinkError, match="another process holds it"):
            other.link.wait_up(0.3)
        fault = other.get()
        assert isinstance(fault, BridgeFault) and fault.name == "port_busy"
    h.sim.card_exit()
    assert seqs(h.device_events(1)) == [1]


def test_missing_device_is_reported_and_retried(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = str(tmp_path / "smart-shoe")
    sim = DeviceSimulator(heartbeat_interval=0.05, path=path)
    harness = Harness.__new__(Harness)
    harness.sim = sim
    harness.q = queue.Queue()
    harness.link = Link(fast_config(path), harness.q)
    with harness.link:
        with pytest.raises(LinkError, match="is the shoe plugged in"):
            harness.link.wait_up(0.2)
        fault = harness.get()
        assert isinstance(fault, BridgeFault) and fault.name == "open_failed"
        with sim:  # plugged in later
            harness.link.wait_up(5)
            assert isinstance(harness.get(), LinkUp)


def test_a_pyserial_url_is_accepted() -> None:
    q: queue.Queue[object] = queue.Queue()
    # loop:// echoes our own hello back: it opens, but no shoe ever answers
    with Link(fast_config("loop://"), q) as link, pytest.raises(LinkError, match="no hello"):
        link.wait_up(0.5)
    faults = [e.name for e in list(q.queue) if isinstance(e, BridgeFault)]
    assert faults == ["no_answer"]
