"""The index reader on rendered frames of both card designs, each learned from its own
calibration frames; rejections; the calibration profile file."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import cv2
import numpy as np
import pytest

from shoe_controller.game.cards import parse_card
from shoe_controller.sim import render
from shoe_controller.sim.render import CALIBRATION, FULL, GUIDED, Pose
from shoe_controller.vision.index_learn import DeckLearner, LearnError, learn_profile
from shoe_controller.vision.index_reader import IndexReader
from shoe_controller.vision.profile import (
    PROFILE_VERSION,
    Profile,
    ProfileError,
    load_profile,
    save_profile,
    update_camera_settings,
)

STYLES = render.STYLES


def _calibration_frames(style: str) -> dict[str, np.ndarray]:
    return {
        label: render.render_frame(label, style, CALIBRATION, seed=i, pose=Pose())[0]
        for i, label in enumerate((*render.CARD_CODES, "CUT"))
    }


@pytest.fixture(scope="module")
def profiles() -> dict[str, Profile]:
    return {style: learn_profile(_calibration_frames(style), source=style) for style in STYLES}


@pytest.fixture(scope="module")
def readers(profiles: dict[str, Profile]) -> dict[str, IndexReader]:
    return {style: IndexReader(p) for style, p in profiles.items()}


# --------------------------------------------------------------------------- reading

# one index in view: the rest of the card runs out of the frame
POSES = [
    Pose((200.0, 300.0), False, 0.0, 1.0),
    Pose((420.0, 150.0), True, 0.0, 1.0),
    Pose((90.0, 330.0), False, 12.0, 0.88),
    Pose((560.0, 120.0), True, -13.0, 1.12),
    Pose((330.0, 380.0), False, -8.0, 1.05),
    Pose((150.0, 100.0), True, 9.0, 0.9),
]


@pytest.mark.parametrize("style", STYLES)
def test_reads_every_card_upright_and_upside_down(style: str, readers: dict) -> None:
    reader = readers[style]
    for i, code in enumerate(render.CARD_CODES):
        pose = POSES[i % len(POSES)]
        frame, truth = render.render_frame(code, style, FULL, seed=100 + i, pose=pose)
        read = reader.read(frame)
        assert read.kind == "card", (code, pose, read)
        assert read.card is parse_card(code)
        assert read.orientation == truth.orientation == ("down" if pose.upside_down else "up")
        assert 0.75 <= read.confidence <= 1.0


@pytest.mark.parametrize("style", STYLES)
def test_cut_card_and_empty_window(style: str, readers: dict) -> None:
    reader = readers[style]
    for seed in range(6):
        cut, _ = render.render_frame("CUT", style, FULL, seed=seed)
        assert reader.read(cut).kind == "cut"
        empty, _ = render.render_frame("NONE", style, FULL, seed=seed)
        read = reader.read(empty)
        assert read.kind == "empty" and read.card is None


@pytest.mark.parametrize(("style", "deg"), [(s, d) for s in STYLES for d in ("guided", "full")])
def test_sampled_frames_no_misread(style: str, deg: str, readers: dict) -> None:
    """A small sample of the bench's ranges: nearly all correct, never a wrong verdict."""
    reader = readers[style]
    degradation = GUIDED if deg == "guided" else FULL
    labels = render.evaluation_labels(120, seed=7)
    correct = 0
    for i, label in enumerate(labels):
        frame, truth = render.render_frame(label, style, degradation, seed=5000 + i)
        read = reader.read(frame)
        got = {"card": read.card.code if read.card else "", "cut": "CUT", "empty": "NONE"}.get(
            read.kind, "REJECT")
        assert got in (label, "REJECT"), (i, label, read)
        if got == label:
            correct += 1
            if read.kind == "card":
                assert read.orientation == truth.orientation
    assert correct >= 117


def test_grey_frames_read(readers: dict) -> None:
    reader = readers["classic"]
    for i, code in enumerate(("QH", "7S", "TD", "AC")):
        frame, _ = render.render_frame(code, "classic", GUIDED, seed=i, grey=True)
        assert frame.ndim == 2
        read = reader.read(frame)
        assert read.kind == "card" and read.card is parse_card(code)
    # the cut card is told by its colour: in grey it is rejected, never a card
    cut, _ = render.render_frame("CUT", "classic", GUIDED, seed=1, grey=True)
    assert reader.read(cut).kind == "reject"
    empty, _ = render.render_frame("NONE", "classic", GUIDED, seed=1, grey=True)
    assert reader.read(empty).kind == "empty"


def test_each_design_needs_its_own_profile(readers: dict) -> None:
    """A deck read with another deck's profile: rejected or right, never a wrong card."""
    for i, code in enumerate(render.CARD_CODES[::4]):
        frame, _ = render.render_frame(code, "modern", GUIDED, seed=i)
        read = readers["classic"].read(frame)
        assert read.kind in ("reject", "card")
        if read.kind == "card":
            assert read.card is parse_card(code)


# --------------------------------------------------------------------------- rejections


def _composed(faces_poses: list, seed: int = 3, deg: render.Degradation = GUIDED) -> np.ndarray:
    rng = np.random.default_rng(seed)
    frame = render.empty_background(rng)
    for face, pose in faces_poses:
        frame = render.compose_frame(face, pose, frame)
    return render.degrade(frame, deg, rng)


@pytest.mark.parametrize("style", STYLES)
def test_two_cards_in_view_are_rejected(style: str, readers: dict) -> None:
    a = render.draw_card_face("9S", style)
    b = render.draw_card_face("6H", style)
    frame = _composed([(a, Pose((60.0, 200.0), False, 0.0, 0.9)),
                       (b, Pose((380.0, 200.0), False, 0.0, 0.9))])
    read = readers[style].read(frame)
    assert read.kind == "reject"
    assert "two" in read.reason


@pytest.mark.parametrize("style", STYLES)
def test_heavy_blur_is_rejected_not_guessed(style: str, readers: dict) -> None:
    heavy = render.with_range(GUIDED, motion_blur=(30.0, 30.0), defocus=(3.0, 3.0))
    for i, code in enumerate(("8C", "3S", "QD", "6H")):
        frame, _ = render.render_frame(code, style, heavy, seed=i)
        read = readers[style].read(frame)
        assert read.kind == "reject", (code, read)


@pytest.mark.parametrize("style", STYLES)
def test_half_an_index_is_rejected(style: str, readers: dict) -> None:
    """The index cut by the edge of the view: the rank (or suit) half out of frame."""
    face = render.draw_card_face("8D", style)
    for centre in ((0.0, 230.0), (639.0, 300.0), (300.0, 479.0)):
        frame = _composed([(face, Pose(centre, False, 0.0, 1.0))])
        read = readers[style].read(frame)
        assert read.kind in ("reject", "empty"), (centre, read)


def test_a_foreign_glyph_is_rejected(readers: dict) -> None:
    """An index the deck does not have (a letter for a rank) is no card."""
    face = render.draw_card_face("KS", "classic")
    img = face.image.copy()
    x0, y0, x1, y1 = face.index_box
    rank_bottom = y0 + (y1 - y0) // 2 - 2
    img[y0:rank_bottom, x0:x1] = img[5, 140]  # paper
    cv2.putText(img, "Z", (x0 + 6, rank_bottom), cv2.FONT_HERSHEY_DUPLEX, 1.0, (20, 20, 20), 3)
    fake = render.CardFace(img, face.mask, face.index_box)
    frame = _composed([(fake, Pose())])
    assert readers["classic"].read(frame).kind == "reject"


# --------------------------------------------------------------------------- profile


def test_profile_round_trip(profiles: dict, tmp_path: Path) -> None:
    p = profiles["modern"].with_camera(roi=[10, 20, 600, 400], exposure=80.5)
    path = tmp_path / "deck.profile.npz"
    save_profile(p, path)
    q = load_profile(path)
    assert np.array_equal(q.rank_templates, p.rank_templates)
    assert np.array_equal(q.suit_templates, p.suit_templates)
    assert q.geometry == p.geometry and q.colours == p.colours
    assert q.thresholds == p.thresholds and q.source == "modern"
    assert q.camera == {"roi": [10, 20, 600, 400], "exposure": 80.5}
    assert q.version == PROFILE_VERSION and q.created
    frame, _ = render.render_frame("JC", "modern", GUIDED, seed=1)
    assert IndexReader(q).read(frame).card is parse_card("JC")


def test_camera_settings_update_keeps_the_deck(profiles: dict, tmp_path: Path) -> None:
    path = tmp_path / "p.npz"
    only_camera = update_camera_settings(path, exposure=120)  # no profile yet: camera only
    assert not only_camera.has_deck and load_profile(path).camera == {"exposure": 120}
    with pytest.raises(ProfileError, match="no deck learned"):
        IndexReader(load_profile(path))
    save_profile(profiles["classic"].with_camera(exposure=120), path)
    update_camera_settings(path, focus=3.5, exposure=None)
    q = load_profile(path)
    assert q.camera == {"focus": 3.5} and q.has_deck
    with pytest.raises(ProfileError, match="JSON"):
        update_camera_settings(path, roi=object())


def test_bad_profiles_give_clear_errors(profiles: dict, tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="no such profile"):
        load_profile(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"this is no profile at all")
    with pytest.raises(ProfileError, match="corrupt profile"):
        load_profile(junk)
    good = tmp_path / "good.npz"
    save_profile(profiles["classic"], good)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:2000])
    with pytest.raises(ProfileError, match="corrupt profile"):
        load_profile(truncated)
    # another version
    with np.load(good) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["version"] = PROFILE_VERSION + 1
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    newer = tmp_path / "newer.npz"
    np.savez(newer, **arrays)
    with pytest.raises(ProfileError, match=f"profile version {PROFILE_VERSION + 1}"):
        load_profile(newer)
    # templates missing
    meta["version"] = PROFILE_VERSION
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    del arrays["suit_templates"]
    broken = tmp_path / "broken.npz"
    np.savez(broken, **arrays)
    with pytest.raises(ProfileError, match="templates missing"):
        load_profile(broken)
    # some other archive
    other = tmp_path / "other.npz"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("x.npy", b"")
    with pytest.raises(ProfileError):
        load_profile(other)


# --------------------------------------------------------------------------- learning


def test_learning_refuses_a_deck_that_does_not_read_back() -> None:
    frames = _calibration_frames("classic")
    frames["QS"] = frames["QH"]  # a wrong card in the calibration set
    with pytest.raises(LearnError, match="does not read back"):
        learn_profile(frames)


def test_learning_names_the_card_without_an_index() -> None:
    frames = _calibration_frames("modern")
    frames["5D"] = render.render_frame("NONE", "modern", CALIBRATION, seed=1)[0]
    with pytest.raises(LearnError, match="5D: no card in the frame"):
        learn_profile(frames)
    learner = DeckLearner()
    with pytest.raises(LearnError, match="missing"):
        learner.profile()


def test_learning_refuses_a_cut_card_like_the_face() -> None:
    frames = _calibration_frames("classic")
    face = render.draw_cut_face("classic")
    white = render.CardFace(np.full_like(face.image, 238), face.mask, face.index_box)
    frames["CUT"] = _composed([(white, Pose())], deg=CALIBRATION)
    with pytest.raises(LearnError, match="too close to the card face"):
        learn_profile(frames)
