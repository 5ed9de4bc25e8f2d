"""`shoe-calibrate deck-check`: pass full decks through the shoe, prove every card reads.

Frames go through the configured reader and the pass tracker, exactly as in play; each
pass is one read. At the end (the source ends, the expected number of passes is
reached, ``--duration`` runs out or Ctrl-C) it reports the cards missing, the cards
seen more often than the decks hold, the unreadable passes with their reasons, foreign
codes and cut cards. Exit status 0 when the decks read perfectly, 1 otherwise, 2 on a
usage or configuration error.

>>> from shoe_controller.game.cards import parse_card
>>> report = check_decks([CardSeen(c) for c in ALL_CARDS if c.code != "QH"]
...                      + [CardSeen(parse_card("2C")), UnreadableCard("blur")], decks=1)
>>> report.missing, report.duplicated, report.unreadable, report.ok
({'QH': 1}, {'2C': 1}, ['blur'], False)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import msgspec

from calibration.camera import add_source_arguments, camera_config, script_items
from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.inputs import CardSeen, CutCardSeen, ForeignCard, UnreadableCard
from shoe_controller.vision.config import (
    BarcodeConfig,
    VisionConfig,
    VisionConfigError,
    load_vision_sections,
)

__all__ = ["DeckReport", "add_arguments", "check_decks", "run"]


@dataclass
class DeckReport:
    """What a deck check found. ``ok`` only when every card read exactly ``decks`` times."""

    decks: int
    passes: int = 0
    cards_read: int = 0
    missing: dict[str, int] = field(default_factory=dict)
    duplicated: dict[str, int] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    cut: int = 0
    upside_down: int = 0

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated or self.unreadable or self.foreign)

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "ok": self.ok}


def check_decks(inputs: Iterable[object], decks: int) -> DeckReport:
    """Compare the pass reads with ``decks`` full decks (pure)."""
    report = DeckReport(decks)
    seen: Counter[str] = Counter()
    for item in inputs:
        report.passes += 1
        if isinstance(item, CardSeen):
            seen[item.card.code] += 1
            report.upside_down += item.orientation == "down"
        elif isinstance(item, CutCardSeen):
            report.cut += 1
        elif isinstance(item, ForeignCard):
            report.foreign.append(item.payload)
        elif isinstance(item, UnreadableCard):
            report.unreadable.append(item.reason)
    report.cards_read = sum(seen.values())
    for card in ALL_CARDS:
        n = seen[card.code]
        if n < decks:
            report.missing[card.code] = decks - n
        elif n > decks:
            report.duplicated[card.code] = n - decks
    return report


def reads(inputs: list[object]) -> int:
    """Passes that count towards the decks: cards, unreadable and foreign (not the cut card)."""
    return sum(not isinstance(i, CutCardSeen) for i in inputs)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_source_arguments(parser)
    parser.add_argument("--decks", type=int, default=1, help="full decks passed (1)")
    parser.add_argument(
        "--reader", choices=["index", "barcode", "both"], help="override [vision] reader"
    )
    parser.add_argument("--profile", type=Path, help="override [vision] profile")
    parser.add_argument("--duration", type=float, help="stop after this many seconds")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


def _print_report(report: DeckReport) -> None:
    print(
        f"decks {report.decks}: {report.passes} passes, {report.cards_read} cards read, "
        f"{report.cut} cut card(s), {report.upside_down} upside down"
    )
    if report.missing:
        print("missing:    " + " ".join(f"{c}x{n}" for c, n in report.missing.items()))
    if report.duplicated:
        print("duplicated: " + " ".join(f"{c}x{n}" for c, n in report.duplicated.items()))
    for reason in report.unreadable:
        print(f"unreadable: {reason}")
    for payload in report.foreign:
        print(f"foreign:    {payload!r}")
    print("OK: every card read exactly once per deck" if report.ok else "NOT OK")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from shoe_controller.vision.passes import PassTracker
    from shoe_controller.vision.profile import ProfileError
    from shoe_controller.vision.reader import build_reader
    from shoe_controller.vision.sources import CameraError, open_source

    if args.decks < 1:
        print("deck-check: --decks must be at least 1", file=sys.stderr)
        return 2
    try:
        if args.config:
            vision, _camera, barcode = load_vision_sections(args.config)
        else:
            vision, barcode = VisionConfig(), BarcodeConfig()
        changes = {"reader": args.reader, "profile": str(args.profile) if args.profile else None}
        vision = msgspec.structs.replace(
            vision, **{k: v for k, v in changes.items() if v is not None}
        )
        camera = camera_config(args)
        reader = build_reader(vision, barcode)
    except (VisionConfigError, ProfileError, OSError) as exc:
        print(f"deck-check: {exc}", file=sys.stderr)
        return 2
    tracker = PassTracker.from_config(vision, sensor=False, source=vision.reader)
    expected = 52 * args.decks
    live = camera.source in ("usb", "picamera")
    inputs: list[object] = []
    end = None if args.duration is None else time.monotonic() + args.duration
    console = Console(stderr=True)
    try:
        source = open_source(
            camera,
            script=script_items(args.script),
            barcode=args.barcode_cards or vision.reader == "barcode",
            frames_per_pass=args.pass_frames,
        )
    except ValueError as exc:
        print(f"deck-check: --script: {exc}", file=sys.stderr)
        return 2
    try:
        with (
            source,
            Progress(console=console, transient=args.json) as progress,
        ):
            task = progress.add_task("cards read", total=expected)
            for t, frame in source:
                done = tracker.frame(t, reader.read(frame))
                inputs += done
                progress.update(task, completed=min(reads(inputs), expected))
                # A live camera stops once the decks have passed; a replay reads to its end
                # (so a card beyond the decks' count is reported too).
                if live and reads(inputs) >= expected and not tracker.in_pass:
                    break
                if end is not None and time.monotonic() >= end:
                    break
            inputs += tracker.flush()
    except CameraError as exc:
        print(f"deck-check: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        inputs += tracker.flush()
        print("deck-check: stopped; report of what was seen so far", file=sys.stderr)
    report = check_decks(inputs, args.decks)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        _print_report(report)
    return 0 if report.ok else 1
