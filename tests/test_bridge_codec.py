"""The pure codec: round trip of every message, and a decoder that survives any byte stream."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.framing import (
    MAX_ENCODED,
    FrameDecoder,
    cobs_decode,
    cobs_encode,
    crc32,
    encode_frame,
)
from firmware_bridge.protocol import (
    FLAG_REPLAY,
    FLAG_SEQUENCED,
    MESSAGE_TYPES,
    Ack,
    ButtonReport,
    CardExitReport,
    CardReadReport,
    DecodeError,
    DeviceHello,
    FaultReport,
    Heartbeat,
    HostHello,
    Keepalive,
    LidReport,
    Malformed,
    Message,
    Ping,
    Replay,
    RequestStatus,
    Reset,
    SetLights,
    SetLock,
    ShoeEmptyReport,
    ShoeLoadedReport,
    Status,
    StreamDecoder,
    Unknown,
    decode_payload,
    encode,
    encode_payload,
)

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
u64 = st.integers(0, 0xFFFF_FFFF_FFFF_FFFF)
text = st.text(max_size=50)  # at most 200 bytes of UTF-8

MESSAGES: dict[type[Message], st.SearchStrategy[Message]] = {
    DeviceHello: st.builds(DeviceHello, u8, u8, u8, u8, u8, u32, u32, u32, st.text(max_size=16)),
    Heartbeat: st.builds(Heartbeat, u64, u8, u8, u32),
    CardExitReport: st.builds(CardExitReport, u64, u32),
    CardReadReport: st.builds(CardReadReport, u64, u8, st.binary(max_size=200)),
    ButtonReport: st.builds(ButtonReport, u64, u8),
    LidReport: st.builds(LidReport, u64, st.booleans()),
    ShoeLoadedReport: st.builds(ShoeLoadedReport, u64),
    ShoeEmptyReport: st.builds(ShoeEmptyReport, u64),
    FaultReport: st.builds(FaultReport, u64, u16, text),
    Ack: st.builds(Ack, u32, u8, u8),
    Status: st.builds(Status, u64, u8, u8, u32, u16, u32),
    HostHello: st.builds(HostHello, u8, u8),
    Ping: st.builds(Ping, u32),
    SetLights: st.builds(SetLights, u8),
    SetLock: st.builds(SetLock, st.booleans()),
    RequestStatus: st.just(RequestStatus()),
    Reset: st.builds(Reset, st.booleans()),
    Replay: st.builds(Replay, u32),
    Keepalive: st.builds(Keepalive, u16),
}
any_message = st.one_of(*MESSAGES.values())
frames = st.tuples(any_message, u32, st.sampled_from([0, FLAG_REPLAY]))


def test_every_message_type_has_a_strategy() -> None:
    assert set(MESSAGES) == set(MESSAGE_TYPES.values())


@pytest.mark.parametrize("cls", list(MESSAGES), ids=lambda c: c.NAME)
@given(data=st.data(), seq=u32, flags=st.sampled_from([0, FLAG_REPLAY]))
def test_round_trip(cls: type[Message], data: st.DataObject, seq: int, flags: int) -> None:
    msg = data.draw(MESSAGES[cls])
    wire = encode(msg, seq, flags)
    assert wire.count(0) == 1 and wire.endswith(b"\x00")
    (frame,) = StreamDecoder().feed(wire)
    assert frame.msg == msg
    assert frame.seq == seq
    assert frame.type == cls.TYPE
    assert frame.sequenced == cls.SEQUENCED
    assert frame.flags & FLAG_REPLAY == flags & FLAG_REPLAY


@given(st.lists(frames, max_size=20), st.data())
def test_a_stream_in_any_chunks_decodes_to_the_same_frames(frames_, data) -> None:  # type: ignore[no-untyped-def]
    stream = b"".join(encode(m, s, f) for m, s, f in frames_)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    dec = StreamDecoder()
    got = []
    for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += dec.feed(stream[a:b])
    assert [(f.msg, f.seq) for f in got] == [(m, s) for m, s, _ in frames_]
    assert dec.stats["bad_frames"] == 0


@given(st.binary(max_size=2000))
def test_cobs_round_trip(data: bytes) -> None:
    enc = cobs_encode(data)
    assert 0 not in enc
    assert cobs_decode(enc) == data
    assert len(enc) <= len(data) + len(data) // 254 + 1


@pytest.mark.parametrize("n", [0, 1, 253, 254, 255, 508, 509])
@pytest.mark.parametrize("fill", [b"\x01", b"\x00", b"\x00\x01"])
def test_cobs_block_boundaries(n: int, fill: bytes) -> None:
    data = (fill * n)[:n]
    assert cobs_decode(cobs_encode(data)) == data


def test_trailing_bytes_from_a_newer_minor_version_are_ignored() -> None:
    payload = encode_payload(CardExitReport(5, 6), seq=3) + b"new field"
    assert decode_payload(payload).msg == CardExitReport(5, 6)


def test_unknown_type_and_malformed_body_are_reported_not_raised() -> None:
    dec = StreamDecoder()
    unknown = encode_frame(struct.pack("<BBI", 0x42, FLAG_SEQUENCED, 9) + b"body")
    short = encode_frame(struct.pack("<BBI", CardExitReport.TYPE, FLAG_SEQUENCED, 10) + b"\x01")
    bad_len = encode_frame(struct.pack("<BBI", FaultReport.TYPE, 0, 0) + bytes(10) + b"\x09ab")
    tiny = encode_frame(b"\x03\x00")  # shorter than the header: a short frame (§2)
    out = dec.feed(unknown + short + bad_len + tiny)
    assert [type(f.msg) for f in out] == [Unknown, Malformed, Malformed]
    assert out[0].msg == Unknown(0x42, b"body") and out[0].sequenced and out[0].seq == 9
    assert "card_exit: body of 1 bytes" in out[1].msg.reason  # type: ignore[union-attr]
    assert "runs past the end" in out[2].msg.reason  # type: ignore[union-attr]
    assert dec.stats["unknown"] == 1 and dec.stats["malformed"] == 2
    assert dec.stats["short"] == 1 and dec.stats["short_header"] == 0
    with pytest.raises(DecodeError):
        decode_payload(b"\x01")


def test_encode_refuses_what_does_not_fit() -> None:
    with pytest.raises(struct.error):
        encode(SetLights(256))
    with pytest.raises(ValueError, match=r"hello\.device_id: 65 bytes, at most 64"):
        encode(DeviceHello(1, 0, 1, 0, 0, 0, 0, 0, "x" * 65))
    with pytest.raises(ValueError, match=r"card_read\.payload: 201 bytes, at most 200"):
        encode(CardReadReport(0, 1, bytes(201)))


# ---------------------------------------------------------------------- fuzzing
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4000), st.data())
def test_random_bytes_never_raise_and_every_candidate_is_accounted_for(noise: bytes, data) -> None:  # type: ignore[no-untyped-def]
    dec = StreamDecoder()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(noise)), max_size=8)))
    for a, b in zip([0, *cuts], [*cuts, len(noise)], strict=True):
        dec.feed(noise[a:b])
        assert len(dec.framing._buf) <= MAX_ENCODED
    *complete, tail = noise.split(b"\x00")
    candidates = sum(1 for c in complete if c) + (len(tail) > MAX_ENCODED)
    stats = dec.framing.stats
    assert stats.frames + stats.bad_frames == candidates  # delivered, or counted as dropped


mutations = st.lists(
    st.one_of(
        st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(0, 7)),
        st.tuples(st.just("set"), st.integers(0, 10_000), u8),
        st.tuples(st.just("insert"), st.integers(0, 10_000), st.binary(min_size=1, max_size=20)),
        st.tuples(st.just("delete"), st.integers(0, 10_000), st.integers(1, 20)),
    ),
    min_size=1,
    max_size=12,
)


def _mutate(stream: bytes, ops: list[tuple]) -> bytes:  # type: ignore[type-arg]
    b = bytearray(stream)
    for op, pos, arg in ops:
        if not b:
            break
        i = pos % len(b)
        if op == "flip":
            b[i] ^= 1 << arg
        elif op == "set":
            b[i] = arg
        elif op == "insert":
            b[i:i] = arg
        else:
            del b[i : i + arg]
    return bytes(b)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(frames, min_size=1, max_size=25), mutations, st.data())
def test_mutated_streams_deliver_only_frames_that_were_sent(frames_, ops, data) -> None:  # type: ignore[no-untyped-def]
    """No bad-CRC frame is ever delivered: whatever comes out of a damaged stream is
    exactly one of the frames that went in (a damaged frame fails its CRC-32)."""
    sent = [encode(m, s, f) for m, s, f in frames_]
    originals = {(m, s) for m, s, _ in frames_}
    stream = _mutate(b"".join(sent), ops)
    dec = StreamDecoder()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    got = []
    for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += dec.feed(stream[a:b])
    for f in got:
        assert (f.msg, f.seq) in originals
    assert len(got) <= len(frames_) + sum(1 for op in ops if op[0] == "insert")


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000), st.lists(frames, min_size=1, max_size=20), st.data())
def test_valid_frames_after_garbage_are_recovered(garbage: bytes, frames_, data) -> None:  # type: ignore[no-untyped-def]
    """After garbage, every frame following the next delimiter decodes. A sender that
    starts with a delimiter (the host's hello does) loses nothing at all."""
    sent = b"".join(encode(m, s, f) for m, s, f in frames_)
    expected = [(m, s) for m, s, _ in frames_]
    got = [(f.msg, f.seq) for f in StreamDecoder().feed(garbage + b"\x00" + sent)]
    assert got == expected

    # no delimiter after the garbage: only the first frame (glued to it) may be lost
    dec = StreamDecoder()
    stream = garbage.replace(b"\x00", b"\x01") + sent
    cut = data.draw(st.integers(0, len(stream)))
    got = [(f.msg, f.seq) for f in dec.feed(stream[:cut]) + dec.feed(stream[cut:])]
    assert got in (expected, expected[1:])


def test_oversized_junk_is_dropped_with_bounded_memory() -> None:
    dec = FrameDecoder()
    wire = encode_frame(b"\x03\x02\x01\x00\x00\x00hello")
    for _ in range(100):
        assert dec.feed(b"\x55" * 1000) == []
        assert len(dec._buf) <= MAX_ENCODED
    assert dec.feed(b"\x00" + wire) == [b"\x03\x02\x01\x00\x00\x00hello"]
    assert dec.stats.oversize == 1
    assert dec.stats.frames == 1


def test_crc_is_checked() -> None:
    payload = b"\x03\x02\x01\x00\x00\x00" + bytes(12)
    good = cobs_encode(payload + (crc32(payload) & 0xFFFFFFFF).to_bytes(4, "little"))
    bad = cobs_encode(payload + ((crc32(payload) ^ 1) & 0xFFFFFFFF).to_bytes(4, "little"))
    dec = FrameDecoder()
    assert dec.feed(bad + b"\x00" + good + b"\x00") == [payload]
    assert dec.stats.bad_crc == 1
