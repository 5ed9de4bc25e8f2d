"""Framing checked against PROTOCOL.md §2's text and the published COBS vectors.

The reference here is written from the spec text (Cheshire & Baker COBS as §2 states
it, CRC-32 of zlib's kind appended little-endian, ``0x00`` delimiter, 512-byte
payloads), not from framing.py. Issue 15's survivors: a COBS block of exactly 254
non-zero bytes, 512-byte payloads, ``FrameDecoder.reset()`` not clearing the buffer.
"""

from __future__ import annotations

import random
import zlib

import pytest

from firmware_bridge.framing import (
    MAX_PAYLOAD,
    CobsError,
    FrameDecoder,
    cobs_decode,
    cobs_encode,
    encode_frame,
)


def ref_cobs_decode(data: bytes) -> bytes:
    """§2: 'a code byte c (1-255) is followed by c-1 data bytes and an implied 0x00,
    except that code 0xFF implies no zero and the zero implied by the last block is
    dropped.'"""
    out = bytearray()
    i = 0
    while i < len(data):
        c = data[i]
        assert c != 0, "no zero byte inside an encoded frame"
        block = data[i + 1:i + c]
        assert len(block) == c - 1, "code runs past the end"
        out += block
        i += c
        if c != 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def ref_frame(payload: bytes) -> bytes:
    crc = zlib.crc32(payload)
    return cobs_encode(payload + bytes([crc & 0xFF, crc >> 8 & 0xFF, crc >> 16 & 0xFF,
                                        crc >> 24])) + b"\x00"


#: The published vectors (Cheshire & Baker's examples, as Wikipedia lists them).
SEQ_254 = bytes(range(1, 255))
VECTORS = [
    (b"\x00", b"\x01\x01"),
    (b"\x00\x00", b"\x01\x01\x01"),
    (b"\x00\x11\x00", b"\x01\x02\x11\x01"),
    (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
    (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
    (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
    (bytes(range(1, 256)), b"\xff" + SEQ_254 + b"\x02\xff"),
    (bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01"),
    (bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01"),
]


@pytest.mark.parametrize(("raw", "encoded"), VECTORS)
def test_published_cobs_vectors(raw, encoded):
    assert cobs_encode(raw) == encoded
    assert cobs_decode(encoded) == raw


def test_a_block_of_exactly_254_non_zero_bytes():
    # the published form (FF + 254 bytes) decodes; what we send decodes by the spec text
    assert cobs_decode(b"\xff" + SEQ_254) == SEQ_254
    ours = cobs_encode(SEQ_254)
    assert 0 not in ours and ref_cobs_decode(ours) == SEQ_254
    assert ours[0] == 0xFF and ours[1:255] == SEQ_254 and len(ours) <= 256
    assert cobs_decode(b"\x01\xff" + SEQ_254) == b"\x00" + SEQ_254
    assert cobs_decode(cobs_encode(b"\x00" + SEQ_254)) == b"\x00" + SEQ_254
    for n in (253, 254, 255, 508, 509):
        data = bytes((i % 255) + 1 for i in range(n))
        enc = cobs_encode(data)
        assert 0 not in enc and ref_cobs_decode(enc) == data and cobs_decode(enc) == data
        for pad in (b"\x00", b"\x00\x00"):
            assert cobs_decode(cobs_encode(pad + data + pad)) == pad + data + pad


@pytest.mark.parametrize("bad", [b"\x05\x11\x22", b"\x02", b"\xff\x01", b"\x03\x00\x01"])
def test_malformed_cobs_is_refused(bad):
    with pytest.raises(CobsError):
        cobs_decode(bad)


def test_random_blocks_round_trip_and_match_the_spec_decoder():
    rng = random.Random(254)
    for _ in range(300):
        n = rng.choice([0, 1, 253, 254, 255, 300, 508, 512, 516])
        data = bytes(rng.choice([0, rng.randrange(1, 256)]) if rng.random() < 0.2
                     else rng.randrange(1, 256) for _ in range(n))
        enc = cobs_encode(data)
        assert 0 not in enc
        assert ref_cobs_decode(enc) == data == cobs_decode(enc)


def _nonzero_payload(n: int, seed: int) -> bytes:
    """An n-byte payload with no zero whose CRC has no zero byte either: the longest
    encoded frame of that size."""
    rng = random.Random(seed)
    while True:
        p = bytes(rng.randrange(1, 256) for _ in range(n))
        if 0 not in zlib.crc32(p).to_bytes(4, "little"):
            return p


def test_the_spec_size_limit_is_512_bytes():
    assert MAX_PAYLOAD == 512


@pytest.mark.parametrize("kind", ["nonzero", "zeros", "random"])
def test_512_byte_payloads_pass_in_any_chunking(kind):
    rng = random.Random(kind)
    payload = {"nonzero": _nonzero_payload(512, 1), "zeros": bytes(512),
               "random": bytes(rng.randrange(256) for _ in range(512))}[kind]
    wire = encode_frame(payload)
    assert wire == ref_frame(payload)
    assert ref_cobs_decode(wire[:-1])[:-4] == payload
    d = FrameDecoder()
    out: list[bytes] = []
    i = 0
    header = b"\x02\x00\x01\x00\x00\x00"  # the smallest payload (§2, protocol 1.1)
    stream = wire + encode_frame(header) + wire
    while i < len(stream):
        k = rng.randint(1, 64)
        out += d.feed(stream[i:i + k])
        i += k
    assert out == [payload, header, payload]
    assert d.stats.bad_frames == 0 and d.stats.frames == 3


def test_the_longest_512_byte_frame_is_accepted_and_one_byte_more_is_dropped():
    payload = _nonzero_payload(512, 2)
    wire = encode_frame(payload)
    # 516 non-zero bytes: three code bytes (254 + 254 + 8), no zero anywhere
    assert len(wire) - 1 == 516 + 3
    d = FrameDecoder()
    assert d.feed(wire) == [payload]
    # a candidate one byte longer than any valid frame is dropped without buffering on
    d = FrameDecoder()
    assert d.feed(b"\x07" * (len(wire))) == []   # 520 bytes, no delimiter yet
    assert d.stats.oversize == 1
    assert d.feed(b"\x07" * 5000 + b"\x00") == []
    assert d.stats.oversize == 1  # one candidate, counted once
    assert d.feed(wire) == [payload]   # decoding resumes after the delimiter
    # and a complete oversize candidate arriving in one chunk is dropped too
    d = FrameDecoder()
    assert d.feed(b"\x07" * len(wire) + b"\x00" + wire) == [payload]
    assert d.stats.oversize == 1


def test_reset_forgets_a_partial_frame():
    first = encode_frame(b"\x03\x02\x06\x00\x00\x00first")
    second = encode_frame(b"\x05\x00\x00\x00\x00\x00second")
    d = FrameDecoder()
    assert d.feed(first[:7]) == []
    d.reset()
    # the rest of the first frame alone is not a frame; the next one is
    assert d.feed(first[7:] + second) == [b"\x05\x00\x00\x00\x00\x00second"]
    assert d.stats.bad_frames == 1 and d.stats.frames == 1


def test_reset_ends_the_skipping_of_an_oversize_candidate():
    frame = encode_frame(b"\x02\x00\x01\x00\x00\x00hb")
    d = FrameDecoder()
    d.feed(b"\x09" * 700)  # oversize, no delimiter yet: the decoder skips to the next one
    d.reset()
    assert d.feed(frame) == [b"\x02\x00\x01\x00\x00\x00hb"]


def test_bad_crc_short_and_empty_candidates():
    good = encode_frame(b"\x01\x02\x03\x04\x05\x06")
    bad = bytearray(good)
    bad[3] ^= 0x40
    d = FrameDecoder()
    short = cobs_encode(b"\x01\x02\x03\x04") + b"\x00"  # 4 decoded bytes: under 10
    assert d.feed(b"\x00\x00" + bytes(bad) + short + good) == [b"\x01\x02\x03\x04\x05\x06"]
    assert (d.stats.bad_crc, d.stats.short, d.stats.cobs_errors) == (1, 1, 0)
    # protocol 1.1 §2: a frame decodes to at least 10 bytes (6-byte header + CRC)
    d = FrameDecoder()
    assert d.feed(encode_frame(b"")) == [] and d.stats.short == 1
    assert d.feed(encode_frame(b"\x01" * 5)) == [] and d.stats.short == 2  # 9 bytes
    assert d.feed(encode_frame(b"\x01" * 6)) == [b"\x01" * 6]  # the smallest: 10 bytes


def test_decoder_counters_count_what_came():
    d = FrameDecoder()
    assert d.stats.as_dict() == {"bad_crc": 0, "bytes_in": 0, "cobs_errors": 0, "frames": 0,
                                 "oversize": 0, "short": 0, "bad_frames": 0}
    good = encode_frame(b"\x02\x00\x01\x00\x00\x00abc")
    d.feed(good[:3])
    d.feed(good[3:] + b"\x00\x00" + b"\x13\x00")
    s = d.stats.as_dict()
    assert s["bytes_in"] == len(good) + 4 and s["frames"] == 1
    assert s["bad_frames"] == s["cobs_errors"] + s["bad_crc"] + s["short"] + s["oversize"] == 1
    assert repr(d.stats).startswith("DecoderStats({")


def test_the_longest_frame_may_arrive_before_its_delimiter():
    payload = _nonzero_payload(512, 3)
    wire = encode_frame(payload)
    d = FrameDecoder()
    assert d.feed(wire[:-1]) == []          # 519 bytes held, not yet a frame
    assert d.feed(b"\x00") == [payload]
    assert d.stats.oversize == 0


def test_every_oversize_candidate_is_counted():
    big = b"\x07" * 600
    d = FrameDecoder()
    assert d.feed(big + b"\x00" + big + b"\x00") == []   # both whole in one chunk
    assert d.stats.oversize == 2
    d.feed(big)          # and two more arriving without their delimiter yet
    d.feed(b"\x00" + big)
    d.feed(b"\x00")
    assert d.stats.oversize == 4 and d.stats.bad_frames == 4


def test_cobs_errors_say_what_is_wrong():
    with pytest.raises(CobsError, match=r"^zero byte inside a COBS block$"):
        cobs_decode(b"\x02\x00")
    with pytest.raises(CobsError, match=r"^COBS code runs past the end of the frame$"):
        cobs_decode(b"\x05\x11")


def test_several_full_blocks_in_one_frame():
    data = SEQ_254 + b"\x00" + SEQ_254 + b"\x00" + SEQ_254 + SEQ_254
    enc = cobs_encode(data)
    assert ref_cobs_decode(enc) == data == cobs_decode(enc)


def _raw_frame(payload: bytes) -> bytes:
    """A frame built by hand (§2), whatever its size: the encoder refuses oversize."""
    return cobs_encode(payload + zlib.crc32(payload).to_bytes(4, "little")) + b"\x00"


def test_a_513_byte_payload_is_oversize_even_when_it_encodes_short():
    d = FrameDecoder()
    big = _raw_frame(bytes(513))  # zeros: 519 encoded bytes at most, 517 decoded
    assert len(big) - 1 <= 519
    assert d.feed(big + big) == []
    assert d.stats.oversize == 2 and d.stats.frames == 0
    ok = _raw_frame(bytes(512))
    assert d.feed(ok) == [bytes(512)]


def test_every_bad_crc_is_counted():
    good = bytearray(encode_frame(b"\x01\x02\x03\x04\x05\x06"))
    good[2] ^= 0x01
    d = FrameDecoder()
    assert d.feed(bytes(good) * 3) == []
    assert d.stats.bad_crc == 3
