"""The protocol's code tables checked against PROTOCOL.md, by parsing the document.

Encoder, decoder and their tests share one table per kind of code (buttons, faults,
states, capabilities, symbologies, ack status, message types, flags), so a wrong entry
(button 1 read as ``button_1`` instead of ``new_round``) passes all of them. The
firmware is written from PROTOCOL.md alone: the document is the reference. Sections
and lists are found by their headings and lead words, not by line numbers, so a new
minor version that adds codes or sections does not break the parse; a code added on
one side only fails here.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from firmware_bridge import protocol as P

DOC = (Path(P.__file__).parent / "PROTOCOL.md").read_text(encoding="utf-8")
CODE_NAME = re.compile(r"(0x[0-9A-Fa-f]+|\d+)\s+`([a-z][a-z0-9_]*)`")


def section(title_start: str, text: str = DOC) -> str:
    """The text of the section whose heading starts with ``title_start`` (any level),
    up to the next heading of the same or a higher level."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(#+)\s+(.*)$", line)
        if m and m.group(2).startswith(title_start):
            level = len(m.group(1))
            out = []
            for nxt in lines[i + 1:]:
                h = re.match(r"^(#+)\s", nxt)
                if h and len(h.group(1)) <= level:
                    break
                out.append(nxt)
            return "\n".join(out)
    raise AssertionError(f"PROTOCOL.md has no section {title_start!r}")


def list_item(text: str, lead: str) -> str:
    """The bullet item (with its continuation lines) whose text starts with ``lead``."""
    items = re.split(r"\n(?=- )", "\n" + text)
    for item in items:
        if item.strip().startswith(f"- {lead}"):
            return " ".join(line.strip() for line in item.strip().splitlines())
    raise AssertionError(f"no list item starting with {lead!r}")


def table(text: str, first_header: str) -> list[dict[str, str]]:
    """Rows of the markdown table whose first column header is ``first_header``."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_header:
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(dict(zip(cells, [c.strip() for c in row.strip().strip("|")
                                                 .split("|")], strict=False)))
            return rows
    raise AssertionError(f"no table with first column {first_header!r}")


def codes(text: str) -> dict[int, str]:
    return {int(n, 0): name for n, name in CODE_NAME.findall(text)}


def test_version():
    title = DOC.splitlines()[0]
    m = re.search(r"version (\d+)\.(\d+)", title)
    assert m and (int(m.group(1)), int(m.group(2))) == P.PROTOCOL_VERSION


def test_button_codes():
    item = list_item(section("Device to host"), "`button`")
    doc = codes(item.split("Other ids")[0])
    assert doc == P.BUTTON_NAMES
    assert doc[1] == "new_round"  # the one the first campaign got wrong: say it plainly
    # and the round trip the host relies on, and the documented unknown-id form
    for ident, name in doc.items():
        assert P.button_id(name) == ident
    assert "`button_<id>`" in item and P.button_id("button_9") == 9


def test_fault_codes():
    item = list_item(section("Device to host"), "`fault`")
    doc = codes(item.split("`detail`")[0])
    assert doc == P.FAULT_NAMES
    assert doc[0xFFFF] == "other"


def test_ack_status_codes():
    item = list_item(section("8."), "The device answers every command")
    doc = codes(item.split("`status`:", 1)[1])
    assert doc == P.STATUS_NAMES


def _phrases(item: str, after: str) -> dict[int, str]:
    """'0 lid open, 1 shoe loaded, ...' after ``after`` -> {0: 'lid open', ...}."""
    text = item.split(after, 1)[1]
    text = text.split(". ")[0].rstrip(".")
    out = {}
    for part in re.split(r",\s*", text):
        m = re.match(r"^\s*(\d+)\s+(.+?)\s*$", part)
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def test_symbology_codes():
    item = list_item(section("Device to host"), "`card_read`")
    doc = _phrases(item, "`symbology`:")
    assert {k: _norm(v).replace("_", "") for k, v in doc.items()} == P.SYMBOLOGY_NAMES


def test_capability_bits():
    item = list_item(section("Device to host"), "`hello`")
    doc = _phrases(item, "`capabilities` bits:")
    assert set(doc) == set(P.CAPABILITY_NAMES)
    for bit, phrase in doc.items():
        # the code's name is the document's wording, shortened: "lid switch" -> "lid"
        assert P.CAPABILITY_NAMES[bit] in _norm(phrase), (bit, phrase)
    # each name belongs to one bit only
    assert len(set(P.CAPABILITY_NAMES.values())) == len(P.CAPABILITY_NAMES)
    hello = P.DeviceHello(1, 1, 1, 0, 0, 0b1010101, 7, 0, "S")
    assert hello.capability_names == {P.CAPABILITY_NAMES[b] for b in (0, 2, 4, 6)}
    assert P.DeviceHello(1, 1, 1, 0, 0, 1 << 20, 7, 0, "S").capability_names == {"cap_20"}


#: the document's phrase of each state bit -> the constant that names it
STATE_BITS = {"lid open": "STATE_LID_OPEN", "shoe loaded": "STATE_SHOE_LOADED",
              "draw lock engaged": "STATE_LOCKED", "fault latched": "STATE_FAULT"}


def test_state_bits():
    item = list_item(section("Device to host"), "`state` bits")
    doc = _phrases(item, "bits:")
    assert sorted(doc.values()) == sorted(STATE_BITS)
    for bit, phrase in doc.items():
        assert getattr(P, STATE_BITS[phrase]) == 1 << bit, phrase
    consts = {n for n in dir(P) if n.startswith("STATE_")}
    assert consts == set(STATE_BITS.values())


def test_header_flags_and_layout():
    rows = table(section("3."), "offset")
    by_field = {r["field"].strip("`"): r for r in rows}
    assert [int(r["offset"]) for r in rows if r["offset"].isdigit()] == [0, 1, 2, 6]
    assert P.HEADER.format == "<BBI" and P.HEADER.size == 6
    assert (by_field["type"]["type"], by_field["flags"]["type"], by_field["seq"]["type"]) == (
        "u8", "u8", "u32")
    flags = by_field["flags"]["meaning"]
    doc = {name: int(bit) for bit, name in re.findall(r"bit (\d+) `([A-Z_]+)`", flags)}
    assert doc == {"REPLAY": 0, "SEQUENCED": 1}
    assert 1 << doc["REPLAY"] == P.FLAG_REPLAY and 1 << doc["SEQUENCED"] == P.FLAG_SEQUENCED


_SIZES = {"u8": 1, "bool": 1, "u16": 2, "u32": 4, "u64": 8, "str8": 1, "bytes8": 1}


def _body_size(body: str) -> int:
    """Fixed size of a documented body: 'a u8, b u32, c str8' -> 6 (a str8 counts its
    length byte)."""
    if "(empty)" in body:
        return 0
    fields = re.findall(r"`([^`]*)`", body)[0]
    return sum(_SIZES[f.split()[-1]] for f in fields.split(","))


@pytest.mark.parametrize("heading", ["Device to host", "Host to device"])
def test_message_types_names_kinds_and_sizes(heading):
    rows = table(section(heading), "type")
    assert rows
    for row in rows:
        t = int(row["type"], 16)
        cls = P.MESSAGE_TYPES.get(t)
        assert cls is not None, f"{row['type']} {row['name']} has no message class"
        assert row["name"].strip("`") == cls.NAME
        fixed = _body_size(row["body"])
        # FMT holds the fixed fields; a trailing str8/bytes8 adds its length byte
        var = 1 if re.search(r"(str8|bytes8)`", row["body"]) else 0
        assert cls.FMT.size + var == fixed, row["name"]
        if "size" in row:
            size = row["size"]
            assert int(size.split("+")[0]) == fixed, row["name"]
            assert ("+ n" in size) == bool(var)
        if "kind" in row:
            assert (row["kind"] == "event") == cls.SEQUENCED, row["name"]
        assert (t < 0x80) == (heading == "Device to host")
    documented = {int(r["type"], 16) for r in rows}
    ours = {t for t in P.MESSAGE_TYPES if (t < 0x80) == (heading == "Device to host")}
    assert documented == ours


def test_a_button_frame_built_from_the_document_decodes_to_new_round():
    """Bytes laid out by hand from §3 and §5 (not by the encoder)."""
    seq, t_us = 7, 123_456
    payload = bytes([0x05, 0x02]) + struct.pack("<I", seq) + struct.pack("<Q", t_us) + b"\x01"
    frame = P.decode_payload(payload)
    assert frame.seq == seq and frame.sequenced
    assert frame.msg == P.ButtonReport(t_us, 1)
    assert P.BUTTON_NAMES[frame.msg.button] == "new_round"


def test_button_id_refuses_what_is_no_button():
    with pytest.raises(ValueError, match=r"^unknown button 'xxxxxxx3'; known: new_round, "
                                         r"confirm, reveal_player, reveal_banker, "
                                         r"call_supervisor$"):
        P.button_id("xxxxxxx3")
    with pytest.raises(ValueError):
        P.button_id("button_x")


def test_length_prefixed_fields_at_their_limits():
    """§5: device_id at most 64 bytes, payload and detail at most 200."""
    hello = P.DeviceHello(1, 1, 1, 0, 0, 0, 7, 0, "S" * 64)
    assert P.DeviceHello.parse(hello.body()) == hello
    with pytest.raises(ValueError, match=r"^hello\.device_id: 65 bytes, at most 64$"):
        P.DeviceHello(1, 1, 1, 0, 0, 0, 7, 0, "S" * 65).body()
    read = P.CardReadReport(5, 1, b"x" * 200)
    assert P.CardReadReport.parse(read.body()) == read
    with pytest.raises(ValueError, match=r"^card_read\.payload: 201 bytes, at most 200$"):
        P.CardReadReport(5, 1, b"x" * 201).body()
    fault = P.FaultReport(5, 3, "d" * 200)
    assert P.FaultReport.parse(fault.body()) == fault
    with pytest.raises(ValueError, match=r"^fault\.detail: 201 bytes, at most 200$"):
        P.FaultReport(5, 3, "d" * 201).body()
    with pytest.raises(ValueError, match=r"^fault\.detail: 201 bytes, at most 200$"):
        P.FaultReport(5, 3, "d" * 199 + "é").body()  # é: two bytes of UTF-8 (the limit)


@pytest.mark.parametrize(("cls", "what"), [(P.DeviceHello, "hello.device_id"),
                                           (P.CardReadReport, "card_read.payload"),
                                           (P.FaultReport, "fault.detail")])
def test_a_body_without_its_length_byte_says_which_field(cls, what):
    body = bytes(cls.FMT.size)
    with pytest.raises(P.DecodeError, match=rf"^{re.escape(what)}: missing length byte$"):
        cls.parse(body)
    short = bytes(cls.FMT.size - 1)
    with pytest.raises(P.DecodeError, match=rf"body of {cls.FMT.size - 1} bytes, at least "
                                            rf"{cls.FMT.size + 1}"):
        cls.parse(short)


def test_text_fields_that_are_not_utf8_are_read_with_replacement():
    body = P.DeviceHello(1, 1, 1, 0, 0, 0, 7, 0, "").body()[:-1] + b"\x02\xff\xfe"
    assert P.DeviceHello.parse(body).device_id == "\ufffd\ufffd"
    fault = P.FaultReport(5, 3, "").body()[:-1] + b"\x01\xc3"
    assert P.FaultReport.parse(fault).detail == "\ufffd"


def test_hello_replay_and_keepalive_carry_seq_0_and_no_flags():
    """§4: "host_hello, replay and keepalive carry seq 0": encoded with no seq given, the
    header's seq field (u32 little-endian at offset 2, §3) is zero, and no flag is set."""
    from firmware_bridge.framing import FrameDecoder

    for msg in (P.HostHello(1, 1), P.Replay(7), P.Keepalive(1000)):
        decoder = FrameDecoder()
        (payload,) = decoder.feed(P.encode(msg))
        # §3: flags bit 0 REPLAY and bit 1 SEQUENCED unset on a host frame, other bits 0
        assert payload[0] == msg.TYPE and payload[1] == 0 and payload[2:6] == b"\0\0\0\0"
        assert P.encode_payload(msg) == payload
        frame = P.decode_payload(payload)
        assert (frame.seq, frame.flags, frame.msg) == (0, 0, msg)


class _Blob(P.Message):
    """A message of any body size, to reach §2's payload limit (no 1.1 message comes near
    it): type 0x7E is no type of §5."""

    TYPE = 0x7E
    NAME = "blob"
    data: bytes

    def body(self) -> bytes:
        return self.data


def test_a_payload_of_512_bytes_is_the_largest_sent():
    """§2: a payload over 512 bytes (header included, CRC excluded) is never sent."""
    assert len(P.encode_payload(_Blob(b"x" * 506))) == 512
    with pytest.raises(ValueError, match=r"^blob: payload of 513 bytes exceeds 512$"):
        P.encode_payload(_Blob(b"x" * 507))


def test_an_unknown_type_and_a_short_frame_are_reported_as_such():
    """§10: a frame of an unknown type is reported (type, flags, seq and body kept);
    a payload shorter than the 6-byte header of §3 is no frame at all."""
    frame = P.decode_payload(bytes([0x7E, 0x02]) + (9).to_bytes(4, "little") + b"abc")
    assert (frame.type, frame.flags, frame.seq) == (0x7E, 2, 9)
    assert frame.msg == P.Unknown(0x7E, b"abc")
    for n in range(6):
        with pytest.raises(P.DecodeError,
                           match=rf"^frame of {n} bytes is shorter than the 6-byte header$"):
            P.decode_payload(bytes(n))


def test_a_body_too_short_for_its_type_is_reported_malformed_with_its_header():
    """§10: a frame of a known type whose body does not fit it is counted and ignored
    (Malformed), its type, flags and seq kept: a heartbeat (§5: 14-byte body) of 3."""
    frame = P.decode_payload(bytes([0x02, 0x00]) + (5).to_bytes(4, "little") + b"abc")
    assert (frame.type, frame.flags, frame.seq) == (0x02, 0, 5)
    assert isinstance(frame.msg, P.Malformed)
    assert (frame.msg.type, frame.msg.body) == (0x02, b"abc") and frame.msg.reason


def test_the_stream_decoder_counts_every_unknown_and_malformed_frame():
    """§10: frames of unknown types, and known types with bodies that do not fit, are
    delivered as such and counted, one each."""
    from firmware_bridge.framing import encode_frame

    unknown = bytes([0x7E, 0]) + bytes(4) + b"x"
    malformed = bytes([0x02, 0]) + bytes(4) + b"abc"
    d = P.StreamDecoder()
    frames = d.feed(encode_frame(unknown) * 3 + encode_frame(malformed) * 2
                    + P.encode(P.HostHello(1, 1)))
    assert [type(f.msg).__name__ for f in frames] == ["Unknown"] * 3 + ["Malformed"] * 2 + [
        "HostHello"]
    assert (d.stats["unknown"], d.stats["malformed"], d.stats["short_header"]) == (3, 2, 0)
