"""The index reader on rendered frames of several card designs (2- and 4-colour, jumbo,
bordered, court art touching the index), each learned from its own calibration frames;
rejections (shape and colour disagreeing, an unknown plain card); the profile file."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from shoe_controller.game.cards import parse_card
from shoe_controller.sim import render
from shoe_controller.sim.render import CALIBRATION, FULL, GUIDED, Pose
from shoe_controller.vision.index_learn import DeckLearner, LearnError, annotate, learn_profile
from shoe_controller.vision.index_reader import UNKNOWN_PLAIN, IndexReader
from shoe_controller.vision.profile import (
    PROFILE_VERSION,
    Profile,
    ProfileError,
    load_profile,
    save_profile,
    update_camera_settings,
)
from tests.support.vision_decks import calibration_frames, learned_profile

#: classic (2-colour, small index), four-colour (blue diamonds, green clubs), a jumbo
#: index with court art a few pixels from it, a jumbo serif index inside a printed
#: border on ivory, a condensed jumbo index with art touching it
STYLES = ("classic", "four-colour", "dejavu-jumbo", "serif-jumbo-border", "condensed-jumbo-art")
def _calibration_frames(style: str) -> dict[str, np.ndarray]:
    """One frame per card code and CUT at the calibrated pose (rendered once a session;
    the dict and the arrays are this test's own)."""
    return calibration_frames(style)


@pytest.fixture(scope="module")
def profiles() -> dict[str, Profile]:
    return {style: learned_profile(style) for style in STYLES}


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
    """Every card at poses across the range: right, or (rarely) rejected; never wrong."""
    reader = readers[style]
    rejected = []
    for i, code in enumerate(render.CARD_CODES):
        pose = POSES[i % len(POSES)]
        frame, truth = render.render_frame(code, style, FULL, seed=100 + i, pose=pose)
        read = reader.read(frame)
        if read.kind == "reject":
            rejected.append((code, read.reason))
            continue
        assert read.kind == "card", (code, pose, read)
        assert read.card is parse_card(code)
        assert read.orientation == truth.orientation == ("down" if pose.upside_down else "up")
        assert 0.75 <= read.confidence <= 1.0
    assert len(rejected) <= 2, rejected


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
    assert correct >= 115


def test_grey_frames_read(readers: dict) -> None:
    reader = readers["classic"]
    for i, code in enumerate(("QH", "7S", "TD", "AC")):
        frame, _ = render.render_frame(code, "classic", GUIDED, seed=i, grey=True)
        assert frame.ndim == 2
        read = reader.read(frame)
        assert read.kind == "card" and read.card is parse_card(code)
    # the cut card is told by its colour: in grey it is a plain card of no learned
    # colour, rejected as such, never a card and never nothing
    cut, _ = render.render_frame("CUT", "classic", GUIDED, seed=1, grey=True)
    read = reader.read(cut)
    assert read.kind == "reject" and read.reason.startswith(UNKNOWN_PLAIN)
    empty, _ = render.render_frame("NONE", "classic", GUIDED, seed=1, grey=True)
    assert reader.read(empty).kind == "empty"


def test_each_design_needs_its_own_profile(readers: dict) -> None:
    """A deck read with another deck's profile: rejected or right, never a wrong card."""
    for other, learned in (("modern", "classic"), ("serif-jumbo-border", "dejavu-jumbo"),
                           ("classic", "four-colour")):
        for i, code in enumerate(render.CARD_CODES[::4]):
            frame, _ = render.render_frame(code, other, GUIDED, seed=i)
            read = readers[learned].read(frame)
            assert read.kind in ("reject", "card", "cut"), (other, code, read)
            if read.kind == "card":
                assert read.card is parse_card(code), (other, learned, code, read)


# --------------------------------------------------------------------------- rejections


def _composed(faces_poses: list, seed: int = 3, deg: render.Degradation = GUIDED) -> np.ndarray:
    rng = np.random.default_rng(seed)
    frame = render.empty_background(rng)
    for face, pose in faces_poses:
        frame = render.compose_frame(face, pose, frame)
    return render.degrade(frame, deg, rng)


@pytest.mark.parametrize("style", STYLES)
def test_two_cards_in_view_are_rejected(style: str, readers: dict) -> None:
    """Two cards side by side, the left one's corner by the frame's edge (so the frame
    may cut it): both are read, and the frame is rejected."""
    for k, (ca, cb) in enumerate((("9S", "6H"), ("TC", "TH"))):
        for shift in (0.0, 10.0):
            a = render.draw_card_face(ca, style)
            b = render.draw_card_face(cb, style)
            frame = _composed([(a, Pose((60.0 + shift, 200.0), False, 0.0, 0.9)),
                               (b, Pose((380.0, 200.0 + shift), False, 0.0, 0.9))], seed=k)
            read = readers[style].read(frame)
            assert read.kind == "reject", (ca, cb, shift, read)
            assert "two" in read.reason


@pytest.mark.parametrize("style", STYLES)
def test_heavy_blur_is_rejected_not_guessed(style: str, readers: dict) -> None:
    """Blur far past the range: a small index smears away and is rejected; a jumbo one
    may stay legible and be read, but only ever as the right card. Smeared over more
    than its own height it is rejected whatever its size."""
    heavy = render.with_range(GUIDED, motion_blur=(30.0, 30.0), defocus=(3.0, 3.0))
    rank_h = render.design(style).rank_h
    illegible = render.with_range(GUIDED, motion_blur=(1.5 * rank_h, 1.5 * rank_h),
                                  defocus=(0.12 * rank_h, 0.12 * rank_h))
    for i, code in enumerate(("8C", "3S", "QD", "6H")):
        frame, _ = render.render_frame(code, style, heavy, seed=i)
        read = readers[style].read(frame)
        assert read.kind == "reject" or read.card is parse_card(code), (code, read)
        frame, _ = render.render_frame(code, style, illegible, seed=i)
        read = readers[style].read(frame)
        assert read.kind in ("reject", "empty"), (code, read)
    if rank_h < 60:  # smeared over half its height or more: past reading
        rejected = sum(readers[style].read(render.render_frame(code, style, heavy, seed=i)[0]
                                           ).kind == "reject"
                       for i, code in enumerate(("8C", "3S", "QD", "6H")))
        assert rejected >= 2


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
    p = profiles["four-colour"].with_camera(roi=[10, 20, 600, 400], exposure=80.5)
    path = tmp_path / "deck.profile.npz"
    save_profile(p, path)
    q = load_profile(path)
    assert np.array_equal(q.rank_templates, p.rank_templates)
    assert np.array_equal(q.suit_templates, p.suit_templates)
    assert q.geometry == p.geometry and q.colours == p.colours
    assert np.array_equal(q.rank_labels, p.rank_labels)
    assert q.thresholds == p.thresholds and q.source == "four-colour"
    assert q.camera == {"roi": [10, 20, 600, 400], "exposure": 80.5}
    assert q.version == PROFILE_VERSION and q.created
    frame, _ = render.render_frame("JC", "four-colour", GUIDED, seed=1)
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
    # profiles of older readers (version 1; version 2, whose cut card was its hue
    # alone; version 3, without the deck's alike rank pairs): refused, saying why and to
    # learn again
    for version in (1, 2, 3):
        meta["version"] = version
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        old = tmp_path / f"old{version}.npz"
        np.savez(old, **arrays)
        with pytest.raises(ProfileError, match=rf"version {version}, this software reads "
                                               r"version 4 .*how light the cut card is"
                                               r".*which ranks it prints alike"
                                               r".*learn the deck again"):
            load_profile(old)
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


def test_a_white_cut_card_is_learned_and_a_printed_one_refused() -> None:
    """The cut card may be any plain colour, white too: it is told from a face by having
    no print. A card with print is no cut card."""
    frames = _calibration_frames("classic")
    face = render.draw_cut_face("classic")
    white = render.CardFace(np.full_like(face.image, 238), face.mask, face.index_box)
    frames["CUT"] = _composed([(white, Pose())], deg=CALIBRATION)
    reader = IndexReader(learn_profile(frames))
    assert reader.read(_composed([(white, Pose((300.0, 200.0), True, 7.0, 1.05))])).kind == "cut"
    frame, _ = render.render_frame("QH", "classic", FULL, seed=4)
    assert reader.read(frame).card is parse_card("QH")
    frames["CUT"] = frames["7D"]
    with pytest.raises(LearnError, match="CUT: the card shows print"):
        learn_profile(frames)


@pytest.mark.parametrize("style", ["classic", "four-colour"])
def test_an_unknown_plain_card_is_a_fault_not_the_cut_card(style: str, readers: dict) -> None:
    """A plain card of a colour not learned: reported as an unknown plain card (a
    rejection naming it), neither the cut card nor nothing."""
    reader = readers[style]
    cut = render.design(style).cut_colour
    other = (40, 160, 40) if cut[1] < 120 or cut[0] > 100 else (170, 60, 150)
    for seed, pose in enumerate(POSES[:4]):
        frame = _composed([(render.draw_plain_face(other, style), pose)], seed=seed, deg=FULL)
        read = reader.read(frame)
        assert read.kind == "reject" and read.reason.startswith(UNKNOWN_PLAIN), read
        frame = _composed([(render.draw_cut_face(style), pose)], seed=seed, deg=FULL)
        assert reader.read(frame).kind == "cut"


def test_four_colour_deck_under_a_strong_colour_cast(readers: dict) -> None:
    """Blue diamonds and green clubs under a colour cast: read by shape, never mistaken
    for spades (the colour only confirms)."""
    cast = render.with_range(FULL, colour_cast=0.3)
    reader = readers["four-colour"]
    right = 0
    codes = [c for c in render.CARD_CODES if c[1] in "SDC"]
    for i, code in enumerate(codes):
        frame, _ = render.render_frame(code, "four-colour", cast, seed=300 + i)
        read = reader.read(frame)
        assert read.kind == "reject" or read.card is parse_card(code), (code, read)
        right += read.kind == "card"
    assert right >= len(codes) - 2


def test_suit_shape_and_colour_disagreeing_is_rejected(readers: dict) -> None:
    """A spade printed in the diamonds' blue (and a diamond in the spades' black): the
    shape says one suit, the learned colour another: rejected, never either card."""
    d = render.design("four-colour")
    s_ink, h_ink, d_ink, c_ink = d.inks
    swapped = replace(d, inks=(d_ink, h_ink, s_ink, c_ink))
    reader = readers["four-colour"]
    for i, code in enumerate(("7S", "KS", "3D", "QD")):
        face = render.draw_face(code, swapped)
        frame = _composed([(face, POSES[i])], seed=i)
        read = reader.read(frame)
        assert read.kind == "reject" and "disagree" in read.reason, (code, read)
        # the same cards in their own colours read
        frame = _composed([(render.draw_card_face(code, "four-colour"), POSES[i])], seed=i)
        assert reader.read(frame).card is parse_card(code)


def test_learning_explains_a_card_it_cannot_learn(tmp_path: Path) -> None:
    """A card whose index is hidden (a label stuck over the corner): learning names the
    card, says what it saw and what to do, and draws it on the frame."""
    frames = _calibration_frames("dejavu-jumbo")
    frame = frames["QC"].copy()
    region = DeckLearner().glyphs_of(frames["QC"], "QC")
    assert not isinstance(region, type(None))
    x, y = (round(v) for v in region[3].top_left)  # type: ignore[index]
    cv2.rectangle(frame, (x + 4, y + 4), (x + 70, y + 130), (30, 30, 30), -1)
    frames["QC"] = frame
    with pytest.raises(LearnError) as err:
        learn_profile(frames)
    failures = err.value.failures
    assert [f.code for f in failures] == ["QC"]
    assert "QC:" in str(err.value) and "take the frame again" in str(err.value)
    picture = annotate(frame, failures[0])
    assert picture.shape == frame.shape and not np.array_equal(picture, frame)
