"""Read one design's frames of chosen cards and list every frame not read right.

For looking at a weak card: the design's calibration frames are learned as
``bench/vision.py`` learns them (an external deck through ``shoe-calibrate learn``), then
``-n`` frames of each card are rendered in the guided or full range (seed ``S * 1_000_003
+ i``, as the bench seeds its frames) and read; each rejection or misread is printed with
its reason, and with ``--dump DIR`` written as a PNG file.

``--by-edge`` poses each card instead with its index by and over the frame's left or
right edge, outside the bench's frames (which keep the index 4 px inside the frame) but
where a card sliding through the window passes: from the card's own edge out of view
beside the index to the index's first pixels cut, every 1.5 px, upright and upside
down, turned -6, -2, 2 and 6 degrees, at 0.9 and 1.1 of the calibrated scale, in the
guided and the full range (``-n`` is then unused; 256 frames or so a card). Such a
frame must read as the card or be rejected: never as another card.

    python bench/vision_cards.py ext:bellot --cards KS -n 150 --seed 9090
    python bench/vision_cards.py ext:bellot --cards KS KC --range full --dump /tmp/ks
    python bench/vision_cards.py ext:paris --cards TS --by-edge
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import vision as bench  # bench/vision.py: its learning and ranges

from calibration.evaluate import verdict
from shoe_controller.sim import render
from shoe_controller.sim.render import Pose


def by_the_edge(card: str, design: str) -> Iterator[tuple[str, int, Pose]]:
    """(range, seed, pose) of the frames of ``--by-edge`` for one card: its index from
    wholly in view, the card's edge beside it out of view, to its first pixels cut."""
    face = render.draw_card_face(card, design)
    x0, _y0, x1, _y1 = face.index_box
    icx = (x0 + x1) / 2
    edge = int(np.argmax((face.mask > 127).any(axis=0)))
    for rng in ("guided", "full"):
        for down in (False, True):
            for angle in (-6.0, -2.0, 2.0, 6.0):
                # the card's face x=0 this far left of the frame's edge: from the
                # index's first 8 px out of view to the card's edge 4 px inside
                for corner in np.arange(-x0 - 8.0, -edge + 4.0, 1.5):
                    for scale in (0.9, 1.1):
                        cx = float(corner) + scale * icx
                        pose = Pose((render.FRAME_W - 1 - cx if down else cx,
                                     240.0 + 7 * angle), down, -angle if down else angle,
                                    scale)
                        seed = int(abs(corner) * 100 + scale * 10 + (angle + 10) * 1000
                                   + 7) + down
                        yield rng, seed, pose


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("design", nargs="?", default="classic",
                    help="a render.py design or ext:<deck> (classic)")
    ap.add_argument("--cards", nargs="*", help="card codes (default: all 52)")
    ap.add_argument("--range", default="guided", choices=sorted(bench.RANGES))
    ap.add_argument("-n", type=int, default=20, help="frames per card (20)")
    ap.add_argument("--seed", type=int, default=777)
    ap.add_argument("--dump", default="", help="write the frames not read right here")
    ap.add_argument("--by-edge", action="store_true",
                    help="pose the index by and over the frame's left or right edge")
    a = ap.parse_args()
    cv2.setNumThreads(1)
    reader, took, why, _path = bench.learn_style(a.design, Path(tempfile.mkdtemp()))
    if reader is None:
        print(f"{a.design}: learning failed: {why}")
        return 1
    print(f"{a.design}: learned in {took:.1f} s")
    bad: Counter[tuple[str, str]] = Counter()
    cards = a.cards or list(render.CARD_CODES)
    total = 0
    for card in cards:
        if a.by_edge:
            frames = ((f"{rng} {p.centre[0]:.1f},{p.centre[1]:.1f} "
                       f"{'down' if p.upside_down else 'up'} {p.angle:+.0f} {p.scale}",
                       seed, render.render_frame(card, a.design, bench.RANGES[rng], seed,
                                                 pose=p)[0])
                      for rng, seed, p in by_the_edge(card, a.design))
        else:
            frames = ((a.range, a.seed * 1_000_003 + i,
                       render.render_frame(card, a.design, bench.RANGES[a.range],
                                           a.seed * 1_000_003 + i)[0])
                      for i in range(a.n))
        for where, seed, frame in frames:
            total += 1
            read = reader.read(frame)
            got = verdict(read)
            if got == card:
                continue
            print(f"{card} {where} seed={seed} -> {got} {getattr(read, 'reason', '')}")
            bad[(card, got)] += 1
            if a.dump:
                Path(a.dump).mkdir(parents=True, exist_ok=True)
                name = f"{a.design.replace(':', '-')}_{card}_{seed}_{total}.png"
                cv2.imwrite(str(Path(a.dump) / name), frame)
    print(f"{total - sum(bad.values())} of {total} read right; not right: "
          + (", ".join(f"{c} as {g} x{k}" for (c, g), k in sorted(bad.items())) or "none"))
    misread = sum(k for (c, g), k in bad.items() if g not in ("REJECT",))
    if misread:
        print(f"MISREAD: {misread} frames read as another card or as nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
