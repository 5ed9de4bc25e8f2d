"""The index reader on card decks drawn by others (sim/external_decks.py), DEVELOPMENT
decks only (the validation decks are measured by bench/vision.py, never tested or tuned
on here).

Each deck is learned the way a casino technician learns it: one clean rendered view per
card (``render.write_calibration_set``: the calibrated pose, mild sensor noise) in a
directory, then the real CLI ``shoe-calibrate learn --images DIR --out PROFILE``. What
the reader can do today is asserted honestly:

- learning either succeeds, or fails with the learn report's explanation: each refused
  card named with what was seen and what to do, and an annotated picture of its frame;
- the reader never misreads: a frame is read right or rejected (DESIGN.md: "never
  guessed"), guided and full range alike;
- where the targets of issue 12 are not met yet (a deck refused, frames rejected) the
  test is marked xfail with the measured reason (``-ra`` prints it), never hidden.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import cv2
import pytest

from calibration.evaluate import verdict
from shoe_controller.sim import external_decks as ed
from shoe_controller.sim import render

ROOT = Path(__file__).resolve().parent.parent
#: Development decks read here: a 2-colour classic with court art beside the index,
#: a 4-colour deck, jumbo indices on grey stock with a printed corner line (tango), a
#: suit joined to the court art in one ink part (paris's KH) and a jumbo index larger
#: than the usual search box on cream stock (ornamental).
READ_DECKS = ("anglo", "gnomangelo", "anglo_modern_4_color", "tango", "paris", "ornamental")
#: Frames per deck and range (modest: the whole file stays near a minute).
FRAMES = 40

#: Decks that `learn` refuses today (measured on main, docs/vision.md): the issue-12
#: target "learning succeeds for every design" is not met for them.
KNOWN_REFUSED: dict[str, str] = {}
#: Decks whose frames are rejected today in a range (deck, range) -> measured reason.
KNOWN_REJECTING: dict[tuple[str, str], str] = {}

assert set(READ_DECKS) <= set(ed.DEVELOPMENT)  # never a validation deck here


@dataclass(frozen=True)
class Learned:
    deck: str
    returncode: int
    stdout: str
    stderr: str
    profile: Path
    report: Path


_LEARNED: dict[str, Learned] = {}


def learn(deck: str, tmp_root: Path) -> Learned:
    """Write the deck's calibration views and run ``shoe-calibrate learn`` on them (once
    per deck per session)."""
    if deck not in _LEARNED:
        folder = tmp_root / f"calibration-{deck}"
        render.write_calibration_set(folder, f"ext:{deck}")
        profile = tmp_root / f"{deck}.profile.npz"
        report = tmp_root / f"{deck}-report"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
        run = subprocess.run(
            [sys.executable, "-m", "calibration.cli", "learn", "--images", str(folder),
             "--out", str(profile), "--report", str(report), "--quiet"],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        _LEARNED[deck] = Learned(deck, run.returncode, run.stdout, run.stderr, profile,
                                 report)
    return _LEARNED[deck]


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("external-reading")


@pytest.mark.parametrize("deck", READ_DECKS)
def test_learn_succeeds_or_explains_each_refused_card(deck: str, tmp_root: Path) -> None:
    got = learn(deck, tmp_root)
    if got.returncode == 0:
        assert got.profile.is_file()
        assert "learned 52 cards and the cut card" in got.stdout
        assert "every calibration frame reads back correctly" in got.stdout
        return
    assert got.returncode == 1, got.stderr
    assert not got.profile.exists()  # a deck that does not read back is not saved
    # "learn: 2S: <what was seen>; put the card ...; 4S: ..." then "learn: 2S: see <png>"
    named = re.findall(r"(?:^learn: |; )([2-9TJQKA][SHDC]|CUT): ([^;\n]+)", got.stderr,
                       re.M)
    assert named, f"learn refused {deck} without naming a card: {got.stderr!r}"
    cards = {code for code, _ in named}
    for code in cards:
        # what was seen, what to do, and where its picture is
        why = [text for c, text in named if c == code and not text.startswith("see ")]
        assert why and len(why[0]) > 20, (code, why)
        assert re.search(rf"{code}: [^;\n]+; [a-z]", got.stderr), (
            f"{code}: no advice after what was seen in {got.stderr[:300]!r}")
        assert f"{code}: see " in got.stderr
        picture = got.report / f"{code}.png"
        assert picture.is_file(), f"no picture for {code} in {got.report}"
        img = cv2.imread(str(picture))
        assert img is not None and img.shape[:2] == (render.FRAME_H, render.FRAME_W)


@pytest.mark.parametrize("deck", READ_DECKS)
def test_learning_succeeds(deck: str, tmp_root: Path, request: pytest.FixtureRequest
                           ) -> None:
    if deck in KNOWN_REFUSED:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_REFUSED[deck], strict=False))
    got = learn(deck, tmp_root)
    assert got.returncode == 0, f"learn refused {deck}: {got.stderr.strip()[:400]}"


_READS: dict[tuple[str, str], Counter[str]] = {}


def _read(deck: str, profile: Path, rng_name: str, n: int) -> Counter[str]:
    """Verdicts of ``n`` rendered frames (90 % cards, 5 % cut, 5 % empty), once per deck
    and range per session."""
    if (deck, rng_name) not in _READS:
        _READS[deck, rng_name] = _read_frames(deck, profile, rng_name, n)
    return _READS[deck, rng_name]


def _read_frames(deck: str, profile: Path, rng_name: str, n: int) -> Counter[str]:
    from shoe_controller.vision.index_reader import IndexReader
    from shoe_controller.vision.profile import load_profile

    reader = IndexReader(load_profile(profile))
    deg = {"guided": render.GUIDED, "full": render.FULL}[rng_name]
    tally: Counter[str] = Counter()
    for i, label in enumerate(render.evaluation_labels(n, seed=7)):
        frame, _truth = render.render_frame(label, f"ext:{deck}", deg, seed=9000 + i)
        got = verdict(reader.read(frame))
        kind = "right" if got == label else "rejected" if got == "REJECT" else "misread"
        tally[kind] += 1
        if kind == "misread":
            tally[f"{label} as {got}"] += 1
    return tally


@pytest.mark.parametrize("rng_name", ["guided", "full"])
@pytest.mark.parametrize("deck", READ_DECKS)
def test_never_a_misread(deck: str, rng_name: str, tmp_root: Path) -> None:
    got = learn(deck, tmp_root)
    if got.returncode != 0:
        pytest.xfail(f"learn refused {deck}, nothing to read: {got.stderr.strip()[:300]}")
    tally = _read(deck, got.profile, rng_name, FRAMES)
    assert tally["misread"] == 0, f"{deck} {rng_name}: {dict(tally)}"
    assert tally["right"] + tally["rejected"] == FRAMES


@pytest.mark.parametrize("rng_name", ["guided", "full"])
@pytest.mark.parametrize("deck", READ_DECKS)
def test_every_frame_read_right(deck: str, rng_name: str, tmp_root: Path,
                                request: pytest.FixtureRequest) -> None:
    """Issue 12's targets (99.9 % guided, 99 % full) on a small sample: every guided
    frame right; at most one full-range frame of 40 rejected (99 % leaves a third of
    40-frame samples with one)."""
    reason = KNOWN_REFUSED.get(deck) or KNOWN_REJECTING.get((deck, rng_name))
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=False))
    got = learn(deck, tmp_root)
    assert got.returncode == 0, f"learn refused {deck}"
    tally = _read(deck, got.profile, rng_name, FRAMES)
    allowed = 0 if rng_name == "guided" else 1
    assert tally["right"] >= FRAMES - allowed, f"{deck} {rng_name}: {dict(tally)}"
