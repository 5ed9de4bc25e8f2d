"""The index path end to end: synthetic passes -> IndexReader -> pass tracker -> inputs;
`both` mode on cards that carry an index and a code; deck-check with the index reader.

One calibration profile is learned (from the renderer's calibration frames, as a casino
learns its own deck) for the whole module.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

render = pytest.importorskip("shoe_controller.sim.render")
index_learn = pytest.importorskip("shoe_controller.vision.index_learn")
index_reader = pytest.importorskip("shoe_controller.vision.index_reader")
profile_mod = pytest.importorskip("shoe_controller.vision.profile")

from calibration.cli import main as calibrate  # noqa: E402
from shoe_controller.game.cards import parse_card  # noqa: E402
from shoe_controller.game.inputs import CardSeen, CutCardSeen, UnreadableCard  # noqa: E402
from shoe_controller.sim.sources import SyntheticSource  # noqa: E402
from shoe_controller.vision.barcode import BarcodeReader  # noqa: E402
from shoe_controller.vision.passes import PassTracker  # noqa: E402
from shoe_controller.vision.reader import BothReaders  # noqa: E402
from tests.support.vision_decks import learned_profile  # noqa: E402

STYLE = "classic"


@pytest.fixture(scope="module")
def profile() -> object:
    # the renderer's calibration frames of the deck (one per card code and CUT, at the
    # calibrated pose), learned once a session (test_vision_reader learns the same)
    return learned_profile(STYLE)


@pytest.fixture(scope="module")
def profile_file(profile: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("profile") / "table.profile.npz"
    profile_mod.save_profile(profile, path)
    return path


def test_index_passes_with_exit_sensor(profile: object) -> None:
    script = ["QH", "7D", "CUT", "AS", "TC", "9H"]
    src = SyntheticSource(script, style=STYLE, frames_per_pass=4, gap=2, seed=21)
    reader = index_reader.IndexReader(profile)
    tracker = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.005, source="index")
    out: list[object] = []
    with src:
        frames = list(src)
    exits = list(src.exits)
    for t, frame in frames:
        while exits and exits[0] < t:
            out += tracker.card_exit(exits.pop(0))
        out += tracker.frame(t, reader.read(frame))
    for t in exits:
        out += tracker.card_exit(t)
    out += tracker.flush()
    assert len(out) == len(script)  # one input per physical pass, nothing lost
    for got, label in zip(out, script, strict=True):
        if label == "CUT":
            assert got == CutCardSeen()
        else:
            # Never a wrong card; a guided pass reads (unreadable would stop the round).
            assert isinstance(got, CardSeen), got
            assert got.card is parse_card(label) and got.source == "index"
            assert got.orientation in ("up", "down")


def test_index_pass_orientation_follows_the_card(profile: object) -> None:
    reader = index_reader.IndexReader(profile)
    for down, expected in ((0.0, "up"), (1.0, "down")):
        src = SyntheticSource(["KD"], style=STYLE, frames_per_pass=5, seed=3, upside_down=down)
        tracker = PassTracker(min_frames=2)
        with src:
            out = [i for t, f in src for i in tracker.frame(t, reader.read(f))]
        assert out + tracker.flush() == [CardSeen(parse_card("KD"), expected, "index")]


def coded_face(code: str, payload: str) -> object:
    """The renderer's card face with a Code 128 code printed across its middle."""
    import zxingcpp

    face = render.draw_card_face(code, STYLE)
    img = face.image.copy()
    bars = np.asarray(
        zxingcpp.create_barcode(payload, zxingcpp.BarcodeFormat.Code128).to_image(scale=2)
    )
    bars = cv2.resize(bars[:1], (bars.shape[1], 60), interpolation=cv2.INTER_NEAREST)
    h, w = img.shape[:2]
    y0, x0 = (h - bars.shape[0]) // 2, (w - bars.shape[1]) // 2
    img[y0 : y0 + bars.shape[0], x0 : x0 + bars.shape[1]] = bars[..., None]
    return render.CardFace(img, face.mask, face.index_box)


def whole_card_frames(face: object, n: int, seed: int) -> list[np.ndarray]:
    """Frames with the whole card in view (both its index and its code), guided range
    without motion blur across the bars."""
    rng = np.random.default_rng(seed)
    deg = replace(render.GUIDED, motion_blur=(0.0, 0.0), y_band=None)
    frames = []
    for k in range(n):
        down = bool(k % 2)
        centre = (
            (float(rng.uniform(250, 590)), float(rng.uniform(300, 420)))
            if down
            else (float(rng.uniform(50, 400)), float(rng.uniform(60, 180)))
        )
        pose = render.Pose(centre, down, float(rng.uniform(-3, 3)), float(rng.uniform(0.97, 1.03)))
        frame = render.compose_frame(face, pose, render.empty_background(rng))
        frames.append(render.degrade(frame, deg, rng))
    return frames


def test_both_readers_agree_on_cards_with_index_and_code(profile: object) -> None:
    both = BothReaders(index_reader.IndexReader(profile), BarcodeReader())
    for frame in whole_card_frames(coded_face("QH", "D1-QH"), 4, seed=5):
        read = both.read(frame)
        assert (read.kind, read.card) == ("card", parse_card("QH")), read.reason
        assert read.orientation in ("up", "down")


def test_both_readers_reject_a_code_that_contradicts_the_index(profile: object) -> None:
    """A card whose code says QD but whose index says QH: never either of them."""
    both = BothReaders(index_reader.IndexReader(profile), BarcodeReader())
    for frame in whole_card_frames(coded_face("QH", "D1-QD"), 4, seed=6):
        read = both.read(frame)
        assert read.kind == "reject"
        assert read.reason == "readers disagree: index reads QH, barcode reads QD"


def test_deck_check_with_the_index_reader(
    profile_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = "QH 7D 7D CUT 2S"
    rc = calibrate(
        [
            "deck-check",
            "--source",
            "synthetic",
            "--script",
            script,
            "--pass-frames",
            "3",
            "--fps",
            "60",
            "--reader",
            "index",
            "--profile",
            str(profile_file),
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert rc == 1  # four cards are not a deck
    assert report["cards_read"] == 4 and report["cut"] == 1 and report["unreadable"] == []
    assert report["duplicated"] == {"7D": 1}
    assert "QH" not in report["missing"] and "2S" not in report["missing"]
    assert report["missing"]["KC"] == 1 and len(report["missing"]) == 49


def test_smeared_pass_is_unreadable_never_a_card(profile: object) -> None:
    reader = index_reader.IndexReader(profile)
    src = SyntheticSource(["8S"], style=STYLE, frames_per_pass=5, seed=8)
    tracker = PassTracker(min_frames=2)
    out: list[object] = []
    with src:
        for t, frame in src:
            out += tracker.frame(t, reader.read(cv2.GaussianBlur(frame, (0, 0), 9)))
    out += tracker.flush()
    assert len(out) == 1 and isinstance(out[0], UnreadableCard)
