"""`shoe-calibrate learn` and `evaluate` end to end on small rendered sets written to real
PNG and JPEG files; the live walk-through over a synthetic frame source."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from calibration.cli import main
from calibration.learn import SORTED_DECK, walk_deck
from shoe_controller.sim import render
from shoe_controller.sim.sources import SyntheticSource
from shoe_controller.vision.index_learn import DeckLearner
from shoe_controller.vision.profile import load_profile, update_camera_settings

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("vision-sets")
    render.write_calibration_set(base / "cal", "modern", seed=3)
    labels = render.write_evaluation_set(base / "eval", "modern", render.FULL, 60, seed=4,
                                         ext="jpg")
    return {"cal": base / "cal", "eval": base / "eval", "labels": labels, "base": base}


@pytest.fixture(scope="module")
def learned(sets: dict[str, Path]) -> Path:
    """The calibration set learned by `learn` once for the module: the tests that only
    evaluate share it (test_learn_then_evaluate checks what `learn` itself says)."""
    profile = sets["base"] / "learned.profile.npz"
    assert main(["learn", "--images", str(sets["cal"]), "--out", str(profile), "--quiet"]) == 0
    return profile


def test_learn_then_evaluate(sets: dict[str, Path], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "table.profile.npz"
    update_camera_settings(profile, roi=[0, 0, 640, 480], exposure=90)  # `camera` ran first
    assert main(["learn", "--images", str(sets["cal"]), "--out", str(profile), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "learned 52 cards and the cut card" in out and f"wrote {profile}" in out
    learned = load_profile(profile)
    assert learned.has_deck and learned.camera == {"roi": [0, 0, 640, 480], "exposure": 90}

    assert main(["evaluate", "--profile", str(profile), "--images", str(sets["eval"]),
                 "--labels", str(sets["labels"]), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("frames", "correct", "rejected", "misread", "ms_per_frame_median",
                "ms_per_frame_p99"):
        assert key in result
    assert result["frames"] == 60
    assert result["correct"] + result["rejected"] + result["misread"] == 60
    assert result["misread"] == 0 and result["correct"] >= 58
    assert 0 < result["ms_per_frame_median"] <= result["ms_per_frame_p99"]

    assert main(["evaluate", "--profile", str(profile), "--images", str(sets["eval"]),
                 "--labels", str(sets["labels"])]) == 0
    text = capsys.readouterr().out
    assert "frames     60" in text and "misread    0" in text and "accuracy" in text


def test_evaluate_counts_misreads(sets: dict[str, Path], learned: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    profile = learned
    capsys.readouterr()
    # the same frames with every card label moved on by one card: each card is misread
    rows = list(csv.reader(sets["labels"].open()))[1:]
    codes = render.CARD_CODES
    wrong = tmp_path / "wrong.csv"
    with wrong.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("filename", "label"))
        for name, label in rows:
            w.writerow((name, codes[(codes.index(label) + 1) % 52] if label in codes else label))
    rc = main(["evaluate", "--profile", str(profile), "--images", str(sets["eval"]),
               "--labels", str(wrong), "--json", "--max-misread", "0"])
    result = json.loads(capsys.readouterr().out)
    cards = sum(1 for _, label in rows if label in codes)
    assert rc == 1
    assert result["misread"] >= cards - 2 and result["misreads"]


def test_learn_usage_errors(sets: dict[str, Path], tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    partial = tmp_path / "partial"
    partial.mkdir()
    for p in sets["cal"].iterdir():
        if p.stem not in ("QH", "CUT"):
            (partial / p.name).write_bytes(p.read_bytes())
    assert main(["learn", "--images", str(partial), "--out", str(tmp_path / "x.npz")]) == 1
    err = capsys.readouterr().err
    assert "no frame for QH CUT" in err
    assert not (tmp_path / "x.npz").exists()
    assert main(["learn", "--images", str(tmp_path / "nowhere"), "--out",
                 str(tmp_path / "x.npz")]) == 1
    assert "no such folder" in capsys.readouterr().err
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    assert main(["learn", "--images", str(sets["cal"]), "--out", str(bad)]) == 1
    assert "corrupt profile" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["learn", "--out", str(tmp_path / "x.npz")])  # neither --images nor --live
    assert e.value.code == 2


def test_evaluate_usage_errors(sets: dict[str, Path], learned: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("filename,label\n00000.jpg,QH\n00001.jpg,XX\n")
    missing = tmp_path / "none.npz"
    assert main(["evaluate", "--profile", str(missing), "--images", str(sets["eval"]),
                 "--labels", str(labels)]) == 2
    assert "no such profile" in capsys.readouterr().err
    profile = learned
    capsys.readouterr()
    assert main(["evaluate", "--profile", str(profile), "--images", str(sets["eval"]),
                 "--labels", str(labels)]) == 2
    assert f"{labels}:3: 'XX' is not a card" in capsys.readouterr().err
    labels.write_text("name,card\n00000.jpg,QH\n")
    assert main(["evaluate", "--profile", str(profile), "--images", str(sets["eval"]),
                 "--labels", str(labels)]) == 2
    assert "expected the header 'filename,label'" in capsys.readouterr().err
    labels.write_text("filename,label\nmissing.png,NONE\n")
    assert main(["evaluate", "--profile", str(profile), "--images", str(sets["eval"]),
                 "--labels", str(labels)]) == 2
    assert "missing.png: missing or not a readable image" in capsys.readouterr().err


def test_console_script_end_to_end(sets: dict[str, Path], tmp_path: Path) -> None:
    """The real command line, in a process of its own."""
    profile = tmp_path / "p.npz"
    cmd = [sys.executable, "-m", "calibration.cli"]
    learn = subprocess.run([*cmd, "learn", "--images", str(sets["cal"]), "--out", str(profile)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert learn.returncode == 0, learn.stderr
    ev = subprocess.run([*cmd, "evaluate", "--profile", str(profile), "--images",
                         str(sets["eval"]), "--labels", str(sets["labels"]), "--json"],
                        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["misread"] == 0


# --------------------------------------------------------------------------- live


def _frames(script: list[str], style: str = "classic") -> object:
    src = SyntheticSource(script, style=style, frames_per_pass=5, gap=3, upside_down=0.0,
                          seed=2)
    return (frame for _t, frame in src)


def test_walk_checks_each_card_against_the_expected_one() -> None:
    spades = [c + "S" for c in "A23456789TJQK"]
    order = [*spades, "AH", "2H", "3H"]
    learner = DeckLearner()
    learned: list[str] = []
    refused: list[tuple[str, str]] = []
    # the operator passes 3H where 2H is due, then puts it right
    missing = walk_deck(_frames([*spades, "AH", "3H", "2H", "3H"]), learner, order,
                        on_learned=learned.append,
                        on_refused=lambda code, why: refused.append((code, why)))
    assert missing == []
    assert learned == order
    assert len(refused) == 1 and refused[0][0] == "2H" and "not 2H" in refused[0][1]


def test_walk_reports_what_is_left_when_the_frames_end() -> None:
    learner = DeckLearner()
    missing = walk_deck(_frames(["AS", "NONE", "2S"]), learner)
    assert missing == list(SORTED_DECK[2:])
    assert sorted(learner.samples) == ["2S", "AS"]


@pytest.mark.slow
def test_learn_live_over_a_synthetic_shoe(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The whole walk: a sorted deck and the cut card pass through a simulated shoe."""
    profile = tmp_path / "live.npz"
    rc = main(["learn", "--live", "--source", "synthetic", "--pass-frames", "4",
               "--out", str(profile), "--quiet"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "learned 52 cards and the cut card from a sorted deck" in captured.out
    learned = load_profile(profile)
    assert learned.has_deck and learned.rank_templates is not None
    assert np.isfinite(learned.rank_templates).all()


def test_evaluate_min_accuracy_and_per_card_table(sets: dict[str, Path], learned: Path,
                                                  tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--min-accuracy: exit 1 below it, 0 at or above; the per-card table names the
    cards that were rejected or misread, counted against the labels file."""
    profile = learned
    rows = list(csv.reader(sets["labels"].open()))[1:]
    # three frames relabelled as another card: exactly those are misread
    wrong = tmp_path / "three-wrong.csv"
    moved = {}
    with wrong.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("filename", "label"))
        for name, label in rows:
            if label in render.CARD_CODES and len(moved) < 3:
                moved[name] = "KS" if label != "KS" else "QS"
                label = moved[name]
            w.writerow((name, label))
    capsys.readouterr()
    base = ["evaluate", "--profile", str(profile), "--images", str(sets["eval"]),
            "--labels", str(wrong)]
    assert main([*base, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["misread"] >= 3 and result["per_card"]["KS"]["misread"] >= 3
    assert sum(c["frames"] for c in result["per_card"].values()) == 60
    accuracy = result["accuracy"]
    assert main([*base, "--min-accuracy", f"{accuracy + 0.01:.4f}"]) == 1
    err = capsys.readouterr()
    assert "below --min-accuracy" in err.err
    assert "per card" in err.out and "KS" in err.out
    assert main([*base, "--min-accuracy", f"{100 * accuracy - 1:.2f}%"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main([*base, "--min-accuracy", "1.5"])
    assert e.value.code == 2


def test_learn_failure_report_with_a_picture(sets: dict[str, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A calibration frame that shows no index: learn exits 1 naming the card, what it
    saw and what to do, and writes an annotated picture of that frame."""
    import cv2

    cal = tmp_path / "cal"
    cal.mkdir()
    for p in sets["cal"].iterdir():
        (cal / p.name).write_bytes(p.read_bytes())
    frame = cv2.imread(str(cal / "7H.png"))
    frame[:] = (frame * 0 + 20).astype(np.uint8)  # the card missing: an empty window
    cv2.imwrite(str(cal / "7H.png"), frame)
    out = tmp_path / "deck.profile.npz"
    assert main(["learn", "--images", str(cal), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "7H: no card in the frame" in err and "check the light" in err
    picture = tmp_path / "deck-learn-failures" / "7H.png"
    assert picture.is_file() and f"see {picture}" in err
    assert not out.exists()
