"""The device side without I/O (DeviceCore) and the simulator's pty plumbing."""

from __future__ import annotations

import os
import select
import time

import pytest

from firmware_bridge.device import DeviceCore
from firmware_bridge.protocol import (
    FLAG_REPLAY,
    Ack,
    CardExitReport,
    DeviceHello,
    Heartbeat,
    HostHello,
    Ping,
    Replay,
    RequestStatus,
    Reset,
    SetLights,
    SetLock,
    Status,
    StreamDecoder,
    encode,
)
from firmware_bridge.simulator import DeviceSimulator


def core(**kw: object) -> DeviceCore:
    clock = iter(range(1000, 10**9, 1000))
    return DeviceCore("SHOE-7", clock_us=lambda: next(clock), boot_id=99, **kw)  # type: ignore[arg-type]


def frames(outs: list[tuple[str, bytes]]) -> list:  # type: ignore[type-arg]
    return StreamDecoder().feed(b"".join(w for _, w in outs))


def test_hello_describes_the_device_and_carries_the_high_water_mark() -> None:
    c = core(firmware=(1, 4, 2))
    c.card_exit()
    c.card_exit()
    (f,) = frames(c.receive(encode(HostHello(1, 0))))
    assert isinstance(f.msg, DeviceHello)
    assert (f.msg.device_id, f.msg.firmware, f.msg.boot_id, f.msg.oldest_seq) == (
        "SHOE-7",
        "1.4.2",
        99,
        1,
    )
    assert f.seq == 2
    assert {"card_exit", "lights", "lock"} <= f.msg.capability_names


def test_events_are_numbered_from_one_and_kept_for_replay() -> None:
    c = core(replay_size=3)
    wires = [c.card_exit(40_000 + i) for i in range(5)]
    assert [f.seq for f in frames(wires)] == [1, 2, 3, 4, 5]
    assert all(f.sequenced for f in frames(wires))
    replayed = frames(c.receive(encode(Replay(1))))  # 1 and 2 fell out of the buffer
    assert [f.seq for f in replayed] == [3, 4, 5]
    assert all(f.flags & FLAG_REPLAY for f in replayed)
    assert [f.msg.duration_us for f in replayed] == [40_002, 40_003, 40_004]
    assert frames(c.receive(encode(Replay(6)))) == []
    hb = frames([c.heartbeat()])[0]
    assert isinstance(hb.msg, Heartbeat) and hb.seq == 5 and hb.msg.oldest_seq == 3


def test_commands_execute_once_and_retries_get_the_same_ack() -> None:
    c = core()
    c.receive(encode(HostHello(1, 0)))
    first = frames(c.receive(encode(SetLights(40), seq=1)))
    again = frames(c.receive(encode(SetLights(40), seq=1)))
    assert [f.msg for f in first] == [f.msg for f in again] == [Ack(1, SetLights.TYPE, 0)]
    assert c.executed == [SetLights(40)]
    frames(c.receive(encode(SetLock(True), seq=2)))
    assert c.locked and c.executed == [SetLights(40), SetLock(True)]
    # a new host session numbers from 1 again: not mistaken for a retry
    c.receive(encode(HostHello(1, 0)))
    frames(c.receive(encode(SetLights(10), seq=1)))
    assert c.brightness == 10


def test_status_then_ack_and_a_retry_resends_the_status() -> None:
    c = core()
    c.fault(4, "jammed")
    c.lid(True)
    out = frames(c.receive(encode(RequestStatus(), seq=1)))
    assert [type(f.msg) for f in out] == [Status, Ack]
    st = out[0].msg
    assert (st.fault_code, st.state & 1, st.cards_total) == (4, 1, 0)
    assert [type(f.msg) for f in frames(c.receive(encode(RequestStatus(), seq=1)))] == [Status, Ack]
    frames(c.receive(encode(Reset(False), seq=2)))
    assert c.fault_code == 0 and not c.reboot_requested
    frames(c.receive(encode(Reset(True), seq=3)))
    assert c.reboot_requested


def test_bad_and_unknown_commands_are_answered_not_executed() -> None:
    c = core()
    (ack,) = frames(c.receive(encode(SetLights(101), seq=1)))
    assert ack.msg == Ack(1, SetLights.TYPE, 1)  # bad_argument
    from firmware_bridge.framing import encode_frame

    unknown = encode_frame(bytes([0xC0, 0, 2, 0, 0, 0]) + b"future command")
    (ack,) = frames(c.receive(unknown))
    assert ack.msg == Ack(2, 0xC0, 2)  # unsupported
    assert c.executed == []
    # device-to-host types sent to the device are ignored
    assert c.receive(encode(CardExitReport(1, 2), seq=9)) == []
    assert frames(c.receive(encode(Ping(5), seq=3))) != []


def test_simulator_plugs_and_unplugs_behind_a_stable_path() -> None:
    with DeviceSimulator(heartbeat_interval=0.02) as sim:
        path = sim.path
        first = sim.tty
        assert os.path.realpath(path) == first
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        try:
            deadline = time.monotonic() + 2
            got = b""
            while b"\x00" not in got and time.monotonic() < deadline:
                if select.select([fd], [], [], 0.1)[0]:
                    got += os.read(fd, 256)
            assert isinstance(StreamDecoder().feed(got)[0].msg, Heartbeat)
        finally:
            os.close(fd)
        sim.unplug()
        assert not os.path.lexists(path) and sim.tty is None
        sim.card_exit()  # recorded while unplugged
        sim.replug()
        assert os.path.realpath(path) == sim.tty
        assert sim.last_seq == 1
    assert not os.path.lexists(path)


def test_simulator_validates_names() -> None:
    with DeviceSimulator() as sim:
        with pytest.raises(ValueError, match="unknown button 'launch'"):
            sim.press("launch")
        with pytest.raises(ValueError, match="unknown fault 'smoke'"):
            sim.fault("smoke")
        assert sim.press("button_9") == 1
