"""Barcode path: payload mapping, foreign codes, reading rendered frames from real files."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import cv2
import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.sim.barcode_render import (
    CLEAN,
    GUIDED,
    barcode_face,
    barcode_frame,
    compose,
    empty_frame,
    plain_face,
    write_labelled_set,
)
from shoe_controller.vision.barcode import BarcodeMapping, BarcodeReader
from shoe_controller.vision.config import BarcodeConfig


def cfg(**kw: object) -> BarcodeConfig:
    return msgspec.convert(kw, BarcodeConfig)


# -- mapping -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "code"),
    [("QH", "QH"), ("D3-QH", "QH"), ("d12-10s", "TS"), ("TS", "TS"), ("as", "AS"), ("D1-KC", "KC")],
)
def test_default_mapping_cards(payload: str, code: str) -> None:
    read = BarcodeMapping(BarcodeConfig()).map(payload)
    assert read.kind == "card" and read.card is parse_card(code) and read.confidence == 1.0


def test_every_card_of_every_deck_maps_back() -> None:
    m = BarcodeMapping(cfg(max_deck=8))
    for deck in range(1, 9):
        for c in ALL_CARDS:
            assert m.map(f"D{deck}-{c.code}").card is c


@pytest.mark.parametrize(
    "payload", ["QX", "1H", "D3QH", "D3-QH ", "QHX", "JOKER", "", "D-QH", "11H", "ACME 4711"]
)
def test_codes_that_map_to_no_card_are_foreign(payload: str) -> None:
    read = BarcodeMapping(BarcodeConfig()).map(payload)
    assert read.kind == "foreign" and read.payload == payload
    assert read.card is None


def test_deck_number_beyond_max_deck_is_foreign() -> None:
    m = BarcodeMapping(cfg(max_deck=8))
    assert m.map("D8-2C").kind == "card"
    assert m.map("D9-2C").kind == "foreign" and m.map("D0-2C").kind == "foreign"


def test_cut_payloads_and_custom_pattern() -> None:
    m = BarcodeMapping(
        cfg(pattern=r"CASINO1:(?P<suit>[SHDC])(?P<rank>[A2-9TJQK])", cut_payloads=["CUT", "STOP"])
    )
    assert m.map("CASINO1:HQ").card is parse_card("QH")
    assert m.map("QH").kind == "foreign"  # another casino's (or the default) format
    assert m.map("stop").kind == "cut" and m.map("CUT").kind == "cut"


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ({"pattern": "(?P<rank>[A2-9TJQK])"}, "named groups rank and suit"),
        ({"pattern": "(?P<rank>[A-"}, "not a regular expression"),
        ({"symbology": "Code12"}, "symbology"),
        ({"row_step": 0}, "row_step"),
    ],
)
def test_bad_barcode_config_names_the_problem(table: dict[str, object], fragment: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=fragment):
        msgspec.convert(table, BarcodeConfig)


# -- reading rendered frames ---------------------------------------------------------


def test_reads_clean_rendered_frames_written_to_png_and_jpeg(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    payloads = [f"D{1 + i % 8}-{c.code}" for i, c in enumerate(ALL_CARDS)] + ["CUT", "NONE"]
    labels = write_labelled_set(tmp_path / "png", payloads, rng, CLEAN, ext=".png")
    labels_jpg = write_labelled_set(tmp_path / "jpg", payloads[:20], rng, GUIDED, ext=".jpg")
    reader = BarcodeReader()
    mapping = BarcodeMapping(BarcodeConfig())
    for label_file in (labels, labels_jpg):
        with label_file.open() as f:
            rows = list(csv.DictReader(f))
        for row in rows:
            frame = cv2.imread(str(label_file.parent / row["filename"]))
            assert frame is not None
            read = reader.read(frame)
            if row["label"] == "NONE":
                assert read.kind == "empty"
            else:
                expected = mapping.map(row["label"])
                assert (read.kind, read.card) == (expected.kind, expected.card), row


def test_orientation_from_the_code_turn() -> None:
    rng = np.random.default_rng(3)
    reader = BarcodeReader()
    up = reader.read(barcode_frame("D2-5S", rng, CLEAN, upside_down=False))
    down = reader.read(barcode_frame("D2-5S", rng, CLEAN, upside_down=True))
    assert (up.card, up.orientation) == (parse_card("5S"), "up")
    assert (down.card, down.orientation) == (parse_card("5S"), "down")


def test_foreign_code_on_a_frame() -> None:
    rng = np.random.default_rng(4)
    read = BarcodeReader().read(barcode_frame("ZZ-99", rng, CLEAN))
    assert read.kind == "foreign" and read.payload == "ZZ-99"


def test_other_symbologies_are_not_read() -> None:
    rng = np.random.default_rng(5)
    frame = compose(barcode_face("QH", "Code39"), rng)
    assert BarcodeReader().read(frame).kind == "reject"
    assert BarcodeReader(cfg(symbology="Code39")).read(frame).card is parse_card("QH")


def test_plain_card_without_code_is_rejected_and_dark_window_is_empty() -> None:
    rng = np.random.default_rng(6)
    reader = BarcodeReader()
    plain = compose(np.full_like(plain_face(), 230), rng)
    assert reader.read(plain).kind == "reject"
    assert reader.read(empty_frame(rng)).kind == "empty"


def test_two_different_codes_in_view_are_rejected() -> None:
    rng = np.random.default_rng(8)
    left = compose(barcode_face("D1-QH"), rng, centre=(160, 240))
    both = compose(barcode_face("D1-QD"), rng, centre=(480, 240), background=left)
    read = BarcodeReader().read(both)
    assert read.kind == "reject" and "D1-QD" in read.reason and "D1-QH" in read.reason


def test_region_quarter_turns_and_grey_frames() -> None:
    rng = np.random.default_rng(9)
    frame = compose(barcode_face("D1-9H"), rng, centre=(480, 240))
    assert BarcodeReader(cfg(region=[320, 0, 320, 480])).read(frame).card is parse_card("9H")
    assert BarcodeReader(cfg(region=[0, 0, 300, 480])).read(frame).kind == "empty"
    turned = np.ascontiguousarray(np.rot90(frame))  # a camera mounted a quarter turn round
    assert BarcodeReader().read(turned).kind == "reject"
    assert BarcodeReader(cfg(quarter_turns=1)).read(turned).card is parse_card("9H")
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    assert BarcodeReader(cfg(row_step=1)).read(grey).card is parse_card("9H")


def test_guided_range_reads_every_code_and_never_misreads() -> None:
    rng = np.random.default_rng(12)
    reader = BarcodeReader()
    wrong = unread = 0
    for i in range(52):
        card = ALL_CARDS[i % 52]
        read = reader.read(barcode_frame(f"D{1 + i % 8}-{card.code}", rng, GUIDED))
        wrong += read.kind == "card" and read.card is not card
        unread += read.kind != "card"
    assert wrong == 0 and unread == 0


def test_region_outside_the_frame_is_a_clear_rejection() -> None:
    read = BarcodeReader(cfg(region=[600, 0, 100, 480])).read(np.zeros((480, 640), np.uint8))
    assert read.kind == "reject"
    assert read.reason == "[barcode] region [600, 0, 100, 480] lies outside the 640x480 frame"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_property_a_payload_is_a_card_only_when_it_spells_one(payload: str) -> None:
    read = BarcodeMapping(BarcodeConfig()).map(payload)
    spelled = re.fullmatch(
        r"(?:D[0-9]{1,2}-)?(10|[A2-9TJQK])([SHDC])", payload, re.IGNORECASE | re.ASCII
    )
    if payload.upper() == "CUT" and payload.isascii():
        assert read.kind == "cut"
    elif spelled:
        assert read.kind == "card" and read.card is parse_card(spelled[1] + spelled[2])
    else:
        assert read.kind == "foreign" and read.payload == payload


@pytest.mark.parametrize("payload", ["Q\u017f", "\u212aH", "D1-\u212aC", "\u0131H", "cu\u0442"])
def test_unicode_look_alikes_are_foreign(payload: str) -> None:
    """Case folding must not turn a long s, a Kelvin sign or a dotless i into a card."""
    assert BarcodeMapping(BarcodeConfig()).map(payload).kind == "foreign"
