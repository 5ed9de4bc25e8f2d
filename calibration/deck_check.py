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
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from calibration.camera import add_source_arguments, camera_config, ctrl_c_sets, script_items
from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.inputs import CardSeen, CutCardSeen, ForeignCard, UnreadableCard
from shoe_controller.vision.config import (
    BarcodeConfig,
    VisionConfig,
    VisionConfigError,
    load_vision_sections,
)

__all__ = ["DeckReport", "add_arguments", "check_decks", "collect", "run"]


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
    parser.add_argument(
        "--serial",
        metavar="PORT",
        help="the shoe's serial port (path or pyserial URL): its card-exit sensor bounds "
        "each pass, as in play ([serial] of --config for the other settings)",
    )
    parser.add_argument(
        "--link-timeout", type=float, default=10.0, help="seconds to wait for the shoe (10)"
    )
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


def collect(
    frames: Iterable[tuple[float, Any]],
    reader: Any,
    tracker: Any,
    *,
    exits: queue.Queue[Any] | None = None,
    progress: Callable[[list[object]], None] = lambda _inputs: None,
    stop: Callable[[list[object]], bool] = lambda _inputs: False,
) -> list[object]:
    """Frames -> reader -> pass tracker -> the passes' inputs, until the frames end or
    ``stop`` says so. ``exits``: the serial link's event queue; its card-exit events
    bound the passes (their ``rx_ns`` is on the frames' monotonic clock)."""
    inputs: list[object] = []

    def drain(wait: float = 0.0) -> None:
        while exits is not None:
            try:
                event = exits.get(timeout=wait) if wait else exits.get_nowait()
            except queue.Empty:
                return
            if getattr(event, "kind", None) == "card_exit":
                t = event.rx_ns / 1e9 if event.rx_ns else time.monotonic()
                inputs.extend(tracker.card_exit(t))

    stopped = "deck-check: stopped; the report covers what was seen so far"
    try:
        # Ctrl-C is read between frames: raised inside the exit queue's lock it would
        # leave that lock held, and the drain below would hang (see ctrl_c_sets)
        with ctrl_c_sets(threading.Event()) as ctrl_c:
            for t, frame in frames:
                if ctrl_c.is_set():
                    print(stopped, file=sys.stderr)
                    break
                drain()
                inputs.extend(tracker.frame(t, reader.read(frame)))
                progress(inputs)
                if stop(inputs):
                    break
    except KeyboardInterrupt:  # a second Ctrl-C (a source that delivers no frame)
        print(stopped, file=sys.stderr)
    finally:
        drain(wait=0.2)  # an exit event still on its way for the last card
        inputs.extend(tracker.flush())
    return inputs


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from shoe_controller.vision.passes import PassTracker

    try:
        from shoe_controller.vision.profile import ProfileError
    except ImportError:  # a build without the index reader: the barcode reader still works

        class ProfileError(Exception):  # type: ignore[no-redef]
            pass

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
        serial_cfg = _serial_config(args) if args.serial else None
    except (VisionConfigError, ProfileError, OSError, ValueError) as exc:
        print(f"deck-check: {exc}", file=sys.stderr)
        return 2
    tracker = PassTracker.from_config(vision, sensor=serial_cfg is not None, source=vision.reader)
    expected = 52 * args.decks
    live = camera.source in ("usb", "picamera")
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

    def stop(inputs: list[object]) -> bool:
        # A live camera stops once the decks have passed; a replay reads to its end (so a
        # card beyond the decks' count is reported too).
        if live and reads(inputs) >= expected and not tracker.in_pass:
            return True
        return end is not None and time.monotonic() >= end

    link = None
    inputs: list[object] = []
    try:
        exits: queue.Queue[Any] | None = None
        if serial_cfg is not None:
            from firmware_bridge.link import Link, LinkError

            exits = queue.Queue()
            link = Link(serial_cfg, exits).start()
            try:
                link.wait_up(timeout=args.link_timeout)
            except LinkError as exc:
                print(f"deck-check: serial link: {exc}", file=sys.stderr)
                return 1
        with (
            source,
            Progress(console=console, transient=args.json) as progress,
        ):
            task = progress.add_task("cards read", total=expected)

            def advance(got: list[object]) -> None:
                progress.update(task, completed=min(reads(got), expected))

            inputs = collect(source, reader, tracker, exits=exits, progress=advance, stop=stop)
    except CameraError as exc:
        print(f"deck-check: {exc}", file=sys.stderr)
        return 1
    finally:
        if link is not None:
            link.stop()
    report = check_decks(inputs, args.decks)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        _print_report(report)
    return 0 if report.ok else 1


def _serial_config(args: argparse.Namespace) -> Any:
    """``[serial]`` of --config (if any) with the port from --serial."""
    import tomllib

    from firmware_bridge.config import SerialConfig

    table: dict[str, Any] = {}
    if args.config:
        with open(args.config, "rb") as f:
            table = tomllib.load(f).get("serial", {})
    try:
        cfg = msgspec.convert(table, SerialConfig)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{args.config}: [serial]: {exc}") from exc
    return msgspec.structs.replace(cfg, port=args.serial)
