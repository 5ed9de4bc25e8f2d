"""`shoe-calibrate evaluate`: measure the index reader on labelled frames.

``labels.csv`` has the columns ``filename,label``; a label is a card code (``QH``,
``10S``), ``CUT`` or ``NONE`` (an empty window). Every frame is read with the profile's
learned deck, as in play, and counted:

- correct: the card, the cut card or nothing, as labelled;
- rejected: the reader said it cannot read the frame (in play: no read from this frame;
  the pass tracker needs other frames of the pass);
- misread: any other verdict: a wrong card, a card on a NONE or CUT frame, a cut card or
  nothing where a card was. A misread card decides money; there must be none.

Also printed: accuracy (correct / frames) and the time of one read in milliseconds
(wall clock, image decoding excluded), median and 99th percentile. ``--json`` prints one
object with the keys ``frames``, ``correct``, ``rejected``, ``misread``, ``accuracy``,
``ms_per_frame_median``, ``ms_per_frame_p99`` and ``misreads`` (the first few, with
file name, label and what was read) and ``per_card`` (label -> frames, rejected,
misread). A table of the labels with rejections or misreads shows a weak card at
once; on a terminal a progress bar shows how far the evaluation is. Exit status 0 when
the evaluation ran and met the limits given, 1 with more than ``--max-misread`` frames
misread or an accuracy below ``--min-accuracy``, 2 on a usage error (profile, folder or
labels file missing or malformed).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shoe_controller.game.cards import CardParseError, parse_card
from shoe_controller.vision.reads import FrameRead

__all__ = ["Evaluation", "add_arguments", "evaluate", "read_labels", "run", "verdict"]


class LabelsError(ValueError):
    """labels.csv is missing or malformed (the message names the line)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", type=Path, required=True, help="the learned profile")
    parser.add_argument("--images", type=Path, required=True, metavar="DIR",
                        help="folder of the frames named in labels.csv")
    parser.add_argument("--labels", type=Path, required=True, metavar="CSV",
                        help="filename,label per frame (label: card code, CUT or NONE)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--max-misread", type=int, metavar="N",
                        help="exit 1 when more than N frames are misread")
    parser.add_argument("--min-accuracy", type=_fraction, metavar="P",
                        help="exit 1 when the share of frames read correctly is below P "
                             "(0-1, e.g. 0.99; 99%% also works)")
    parser.add_argument("--show", type=int, default=10, metavar="N",
                        help="list the first N misread and rejected frames (10)")


def _fraction(text: str) -> float:
    """``0.99`` or ``99%`` -> 0.99.

    >>> _fraction("99.5%"), _fraction("0.9")
    (0.995, 0.9)
    """
    t = text.strip()
    try:
        v = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share such as 0.99 or 99%, got {text!r}"
                                         ) from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"accuracy {text!r} is not between 0 and 1 (0-100%)")
    return v


def read_labels(path: Path) -> list[tuple[str, str]]:
    """``(filename, label)`` rows; labels normalized (``10s`` -> ``TS``)."""
    if not path.is_file():
        raise LabelsError(f"{path}: no such labels file")
    rows = []
    with path.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or [h.strip().lower() for h in header[:2]] != ["filename", "label"]:
            raise LabelsError(f"{path}:1: expected the header 'filename,label', got "
                              f"{','.join(header or [])!r}")
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) < 2:
                raise LabelsError(f"{path}:{lineno}: expected filename,label, got {row!r}")
            name, label = row[0].strip(), row[1].strip().upper()
            if label not in ("CUT", "NONE"):
                try:
                    label = parse_card(label).code
                except CardParseError as e:
                    raise LabelsError(f"{path}:{lineno}: {e}, CUT or NONE") from e
            rows.append((name, label))
    if not rows:
        raise LabelsError(f"{path}: no frames listed")
    return rows


def verdict(read: FrameRead) -> str:
    """What a read says, in the labels' terms: a card code, CUT, NONE or REJECT."""
    if read.kind == "card" and read.card is not None:
        return read.card.code
    return {"cut": "CUT", "empty": "NONE"}.get(read.kind, "REJECT")


@dataclass
class Evaluation:
    frames: int = 0
    correct: int = 0
    rejected: int = 0
    misread: int = 0
    times_ms: list[float] = field(default_factory=list)
    misreads: list[dict[str, str]] = field(default_factory=list)
    rejections: list[dict[str, str]] = field(default_factory=list)
    #: label -> [frames, rejected, misread]
    per_card: dict[str, list[int]] = field(default_factory=dict)

    def add(self, name: str, label: str, read: FrameRead, ms: float, keep: int = 10) -> None:
        got = verdict(read)
        self.frames += 1
        self.times_ms.append(ms)
        card = self.per_card.setdefault(label, [0, 0, 0])
        card[0] += 1
        if got == label:
            self.correct += 1
        elif got == "REJECT":
            self.rejected += 1
            card[1] += 1
            if len(self.rejections) < keep:
                self.rejections.append({"filename": name, "label": label, "reason": read.reason})
        else:
            self.misread += 1
            card[2] += 1
            if len(self.misreads) < keep:
                self.misreads.append({"filename": name, "label": label, "read": got})

    def summary(self) -> dict[str, Any]:
        t = np.array(self.times_ms or [0.0])
        return {
            "frames": self.frames,
            "correct": self.correct,
            "rejected": self.rejected,
            "misread": self.misread,
            "accuracy": self.correct / self.frames if self.frames else 0.0,
            "ms_per_frame_median": float(np.median(t)),
            "ms_per_frame_p99": float(np.percentile(t, 99)),
            "misreads": self.misreads,
            "per_card": {k: {"frames": v[0], "rejected": v[1], "misread": v[2]}
                         for k, v in sorted(self.per_card.items())},
        }

    def weak_cards(self) -> list[tuple[str, int, int, int]]:
        """(label, frames, rejected, misread) of the labels with any, worst first."""
        rows = [(k, *v) for k, v in self.per_card.items() if v[1] or v[2]]
        return sorted(rows, key=lambda r: (-r[3], -r[2], r[0]))  # type: ignore[return-value]


def evaluate(reader: Any, frames: Any, keep: int = 10,
             progress: Any = None) -> Evaluation:
    """Read ``(name, label, frame)`` triples with ``reader`` (anything with ``read``);
    ``progress()`` is called after each frame."""
    ev = Evaluation()
    for name, label, frame in frames:
        t0 = time.perf_counter()
        read = reader.read(frame)
        ev.add(name, label, read, (time.perf_counter() - t0) * 1e3, keep)
        if progress is not None:
            progress()
    return ev


def _frames(images: Path, rows: list[tuple[str, str]]) -> Any:
    import cv2

    for name, label in rows:
        path = images / name
        frame = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if frame is None:
            raise LabelsError(f"{path}: missing or not a readable image")
        if frame.ndim == 3 and frame.shape[2] == 4:
            frame = frame[:, :, :3]
        if frame.dtype != np.uint8:
            raise LabelsError(f"{path}: not an 8-bit image ({frame.dtype})")
        yield name, label, frame


def run(args: argparse.Namespace) -> int:
    from shoe_controller.vision.index_reader import IndexReader
    from shoe_controller.vision.profile import ProfileError, load_profile

    try:
        reader = IndexReader(load_profile(args.profile))
        if not args.images.is_dir():
            raise LabelsError(f"{args.images}: no such folder")
        rows = read_labels(args.labels)
        ev = _evaluate_with_progress(reader, args, rows)
    except (ProfileError, LabelsError) as e:
        print(f"evaluate: {e}", file=sys.stderr)
        return 2
    out = ev.summary()
    if args.json:
        print(json.dumps(out))
    else:
        print(f"frames     {out['frames']}")
        print(f"correct    {out['correct']}")
        print(f"rejected   {out['rejected']}")
        print(f"misread    {out['misread']}")
        print(f"accuracy   {100 * out['accuracy']:.2f}%")
        print(f"ms/frame   median {out['ms_per_frame_median']:.2f}, "
              f"p99 {out['ms_per_frame_p99']:.2f}")
        for m in ev.misreads:
            print(f"MISREAD  {m['filename']}: {m['label']} read as {m['read']}")
        for r in ev.rejections:
            print(f"rejected {r['filename']}: {r['label']} ({r['reason']})")
        weak = ev.weak_cards()
        if weak:
            print("per card (labels with rejections or misreads, worst first):")
            print(f"  {'label':6} {'frames':>6} {'rejected':>8} {'misread':>7}")
            for label, n, rej, mis in weak:
                print(f"  {label:6} {n:>6} {rej:>8} {mis:>7}")
    status = 0
    if args.max_misread is not None and out["misread"] > args.max_misread:
        print(f"evaluate: {out['misread']} frames misread, more than --max-misread "
              f"{args.max_misread}", file=sys.stderr)
        status = 1
    if args.min_accuracy is not None and out["accuracy"] < args.min_accuracy:
        print(f"evaluate: accuracy {100 * out['accuracy']:.2f}% is below --min-accuracy "
              f"{100 * args.min_accuracy:.2f}%", file=sys.stderr)
        status = 1
    return status


def _evaluate_with_progress(reader: Any, args: argparse.Namespace,
                            rows: list[tuple[str, str]]) -> Evaluation:
    """:func:`evaluate`, with a progress bar when stderr is a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                  disable=not console.is_terminal, transient=True) as bar:
        task = bar.add_task("frames", total=len(rows))
        return evaluate(reader, _frames(args.images, rows), keep=args.show,
                        progress=lambda: bar.advance(task))
