"""`shoe-calibrate learn`: learn the casino's own deck into a calibration profile.

Two ways in:

- ``--images DIR``: DIR holds one frame per card, named by its code (``QH.png``,
  ``TS.jpg``, ``10S.png`` also works) and ``CUT.png``, each the card as the camera sees it
  in the calibrated position (index fully in view);
- ``--live``: the operator passes a sorted deck (AS..KS, AH..KH, AD..KD, AC..KC, then the
  cut card) through the shoe, one card at a time; frames come from the camera source
  (``[camera]`` of ``--config``, or ``--source``/``--device``). Each card pass is checked
  against the card expected next (its rank must look like the same rank of the suits
  already learned, its suit like the same suit of the ranks already learned); a card
  that does not fit is refused and must be passed again. A progress bar shows where
  the walk is.

Either way the learned profile is read back on every calibration frame before it is
written: a deck that does not read back perfectly is not saved. Every card that cannot
be learned is named with what was seen and what to do, and a picture of its frame with
what was found drawn on it (the corners searched, the ink parts, the rank and suit) is
written to ``--report DIR`` (default: ``<out>-learn-failures/`` beside the profile).
Camera settings already in ``--out`` (from ``shoe-calibrate camera``) are kept. Exit
status 0 when the profile was written, 1 when the deck could not be learned, 2 on a
usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shoe_controller.game.cards import ALL_CARDS, CardParseError, parse_card
from shoe_controller.vision.index_learn import (
    DeckLearner,
    LearnError,
    annotate,
    card_regions,
    template_separation,
)
from shoe_controller.vision.index_reader import CUT_CHROMA, CUT_LIGHTNESS
from shoe_controller.vision.profile import Profile, ProfileError, load_profile, save_profile
from shoe_controller.vision.sources import IMAGE_SUFFIXES

__all__ = ["SORTED_DECK", "add_arguments", "frames_by_label", "run", "walk_deck"]

#: The order of the live walk-through: a sorted deck, then the cut card.
SORTED_DECK: tuple[str, ...] = (*(c.code for c in ALL_CARDS), "CUT")


def _box(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected WIDTH,HEIGHT in pixels, got {text!r}") from None
    if w < 8 or h < 8:
        raise argparse.ArgumentTypeError(f"index box {w}x{h} is too small")
    return w, h


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from calibration.camera import add_source_arguments

    parser.add_argument("--out", type=Path, required=True, help="the profile to write")
    way = parser.add_mutually_exclusive_group(required=True)
    way.add_argument("--images", type=Path, metavar="DIR",
                     help="one frame per card code (QH.png ...) and CUT.png")
    way.add_argument("--live", action="store_true",
                     help="walk a sorted deck, then the cut card, through the shoe")
    parser.add_argument(
        "--index-box", type=_box, metavar="W,H",
        help="where to look for the index from the card's top-left corner, in pixels "
             "(default: from the card's width, or 112,160 when the card is cut off)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--report", type=Path, metavar="DIR",
                        help="where to write annotated pictures of cards that could not be "
                             "learned (default: <out>-learn-failures/ beside the profile)")
    add_source_arguments(parser)


# --------------------------------------------------------------------------- folder


def frames_by_label(directory: Path) -> dict[str, np.ndarray]:
    """The calibration frames of ``directory``: ``{card code or CUT: frame}``.

    Raises :class:`LearnError` for a missing folder, a missing or doubled card, or an
    unreadable image. Files not named by a card code are ignored.
    """
    import cv2

    if not directory.is_dir():
        raise LearnError(f"{directory}: no such folder")
    found: dict[str, Path] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
            continue
        stem = path.stem.strip().upper()
        try:
            label = "CUT" if stem == "CUT" else parse_card(stem).code
        except CardParseError:
            continue
        if label in found:
            raise LearnError(f"{directory}: two frames for {label}: {found[label].name} and "
                             f"{path.name}")
        found[label] = path
    missing = [code for code in SORTED_DECK if code not in found]
    if missing:
        raise LearnError(f"{directory}: no frame for {' '.join(missing)} (expected files "
                         "named by card code, e.g. QH.png, and CUT.png)")
    frames = {}
    for label in SORTED_DECK:
        frame = cv2.imread(str(found[label]), cv2.IMREAD_COLOR)
        if frame is None:
            raise LearnError(f"{found[label]}: not a readable image")
        frames[label] = frame
    return frames


# --------------------------------------------------------------------------- live


@dataclass
class _Pass:
    best: np.ndarray | None = None  # best frame showing an index (or, for CUT, the card)
    score: float = -1.0
    frames: int = 0
    why: str = ""


def walk_deck(
    frames: Iterable[np.ndarray],
    learner: DeckLearner,
    order: Sequence[str] = SORTED_DECK,
    *,
    gap: int = 2,
    on_learned: Callable[[str], None] = lambda code: None,
    on_refused: Callable[[str, str], None] = lambda code, why: None,
) -> list[str]:
    """Learn cards from their passes through the window, in ``order``.

    A pass is a run of frames with a light card in view, ended by ``gap`` frames
    without. From each pass the sharpest frame showing an index is learned as the card
    expected next; a pass that shows no index, or a card that does not fit the ones
    learned before it, is refused (``on_refused(expected, why)``) and the same card is
    expected again. Returns what is still missing when the frames end.
    """
    k = 0
    current: _Pass | None = None
    empty = 0

    def finish(p: _Pass) -> None:
        nonlocal k
        expected = order[k]
        if p.best is None:
            on_refused(expected, p.why or "no index seen in the pass")
            return
        try:
            learner.add(expected, p.best)
        except LearnError as e:
            on_refused(expected, str(e))
            return
        if expected != "CUT":
            problem = learner.check(expected)
            if problem:
                learner.discard(expected)
                on_refused(expected, f"this is not {expected}: {problem}")
                return
        k += 1
        on_learned(expected)

    for frame in frames:
        if k >= len(order):
            break
        regions = card_regions(frame)
        if not regions:
            empty += 1
            if current is not None and empty >= gap:
                finish(current)
                current = None
            continue
        empty = 0
        current = current or _Pass()
        current.frames += 1
        if order[k] == "CUT":
            if regions[0].area > current.score:
                current.best, current.score = frame, regions[0].area
            continue
        got = learner.glyphs_of(frame, order[k])
        if not isinstance(got, tuple):
            current.why = current.why or got.saw
        else:
            ink = got[1]
            contrast = ink.paper - ink.threshold
            if contrast > current.score:
                current.best, current.score = frame, contrast
    if current is not None and k < len(order):
        finish(current)
    return list(order[k:])


# --------------------------------------------------------------------------- command


def _existing_camera(path: Path) -> dict[str, object]:
    if not path.exists():
        return {}
    try:
        return dict(load_profile(path).camera)
    except ProfileError as e:
        raise LearnError(f"{e}. --out exists and is not a profile this software reads: "
                         "remove it or choose another path") from e


def cut_like_the_stock(profile: Profile) -> list[str]:
    """A warning for each learned cut card that the reader cannot tell by its colour
    from the cards' stock: its chromaticity within ``CUT_CHROMA`` of the faces' and its
    brightest level within ``CUT_LIGHTNESS`` of theirs. A card whose print is all out of
    the window (its plain margin alone in view) then reads as the cut card: a plain
    region is the cut card by its colour alone (condensed-jumbo-art's light-grey cut
    card: 0.02 from its white stock's chromaticity, 0.78 times as light).

    >>> p = Profile(colours={"face_chroma": [0.33, 0.33, 0.34], "face_level": 249.0,
    ...                      "cut_chromas": [[0.33, 0.34, 0.33], [0.1, 0.4, 0.5]],
    ...                      "cut_levels": [195.0, 229.0]})
    >>> [w[:72] for w in cut_like_the_stock(p)]
    ["warning: the cut card (CUT) is coloured like the cards' stock (0.02 from"]
    """
    c = profile.colours
    if "face_chroma" not in c or "face_level" not in c:
        return []
    face = np.array(c["face_chroma"], np.float64)
    level = float(c["face_level"])
    lo, hi = CUT_LIGHTNESS
    out = []
    for i, (chroma, cut_level) in enumerate(zip(c.get("cut_chromas", []),
                                                c.get("cut_levels", []), strict=False)):
        d = float(np.abs(np.array(chroma, np.float64) - face).sum())
        ratio = float(cut_level) / max(level, 1e-6)
        if d <= CUT_CHROMA and lo <= 1.0 / max(ratio, 1e-6) <= hi:
            name = "CUT" if i == 0 else f"CUT{i + 1}"
            out.append(f"warning: the cut card ({name}) is coloured like the cards' stock "
                       f"({d:.2f} from its hue, {ratio:.2f} times as light): a card whose "
                       "print is all out of the window would read as the cut card; a cut "
                       "card of a clearly different colour is safer")
    return out


def _summary(profile: Profile, out: Path, source: str) -> str:
    sep = template_separation(profile)
    g = profile.geometry
    r, s = sep["rank"], sep["suit"]
    return "\n".join([
        f"learned 52 cards and the cut card from {source}",
        f"index: rank {g['rank_h_px']:.0f} px high, suit {g['suit_h_px']:.0f} px; "
        f"most alike ranks {r[0]}/{r[1]} ({r[2]:.2f}), suits {s[0]}/{s[1]} ({s[2]:.2f})",
        "every calibration frame reads back correctly",
        *cut_like_the_stock(profile),
        f"wrote {out}",
    ])


def _live_frames(args: argparse.Namespace) -> tuple[Iterable[np.ndarray], object]:
    from calibration.camera import camera_config, script_items
    from shoe_controller.sim.sources import SyntheticSource
    from shoe_controller.vision.sources import open_source

    config = camera_config(args)
    if config.source == "synthetic":
        # a simulated walk: the script (default: the sorted deck), cards face one way
        script = script_items(args.script) or list(SORTED_DECK)
        src = SyntheticSource(script, frames_per_pass=args.pass_frames, fps=config.fps or 60,
                              upside_down=0.0, roi=config.roi)
    else:
        src = open_source(config)
    return src, src


def run(args: argparse.Namespace) -> int:
    learner: DeckLearner | None = None
    try:
        camera = _existing_camera(args.out)
        learner = DeckLearner(learn_box=args.index_box)
        if args.images is not None:
            learner.add_all(frames_by_label(args.images))
            source = str(args.images)
        else:
            source = "a sorted deck passed through the shoe"
            missing = _run_live(args, learner)
            if missing:
                raise LearnError("the frames ended before the walk was done; still to "
                                 f"learn: {' '.join(missing)}")
        profile = learner.profile(source=source, camera=camera)
        save_profile(profile, args.out)
    except LearnError as e:
        print(f"learn: {e}", file=sys.stderr)
        _report(e, learner, args)
        return 1
    except (ProfileError, OSError) as e:
        print(f"learn: {e}", file=sys.stderr)
        return 1
    print(_summary(profile, args.out, source))
    return 0


def _report(error: LearnError, learner: DeckLearner | None, args: argparse.Namespace) -> None:
    """One annotated picture per card that could not be learned, and where it is."""
    import cv2

    if not error.failures or learner is None:
        return
    folder = args.report or args.out.parent / f"{args.out.name.split('.')[0]}-learn-failures"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for failure in error.failures:
            frame = learner.frames.get(failure.code)
            if frame is None:
                continue
            path = folder / f"{failure.code}.png"
            cv2.imwrite(str(path), annotate(frame, failure, args.index_box))
            print(f"learn: {failure.code}: see {path} (corners searched in yellow, ink "
                  "parts in grey, rank green, suit blue)", file=sys.stderr)
    except OSError as e:
        print(f"learn: cannot write the failure pictures to {folder}: {e}", file=sys.stderr)


def _run_live(args: argparse.Namespace, learner: DeckLearner) -> list[str]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from shoe_controller.vision.sources import CameraError

    console = Console(stderr=True)
    try:
        source, ctx = _live_frames(args)
    except CameraError as e:
        raise LearnError(str(e)) from e
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=console, disable=args.quiet, transient=False) as progress:
        task = progress.add_task(f"pass {SORTED_DECK[0]}", total=len(SORTED_DECK))

        def learned(code: str) -> None:
            done = int(progress.tasks[0].completed) + 1
            nxt = SORTED_DECK[done] if done < len(SORTED_DECK) else "done"
            progress.update(task, advance=1, description=f"learned {code}; pass {nxt}")

        def refused(code: str, why: str) -> None:
            progress.console.print(f"[bold red]{code} refused:[/] {why}; pass {code} again")

        try:
            with ctx:  # type: ignore[attr-defined]
                frames = (f for _t, f in source)  # type: ignore[attr-defined]
                return walk_deck(frames, learner, on_learned=learned, on_refused=refused)
        except CameraError as e:
            raise LearnError(str(e)) from e
