"""The card-by-card test's mixture re-weighted offline, from a ``shuffle_record.py``
recording: caught (threshold 10) and median round per kind for each prior, and the best
single component's median round (chosen after the fact, with no dilution at all: what no
prior over these components can beat).

Usage: ``python bench/experiments/shuffle_weights.py REC.npz [SCHEME...]``. A SCHEME is a
Python dict ``{substring: weight}``: a component's weight is that of the first substring in
its name (dict order), else 1. The product's prior, ``STRIP_WEIGHT``, is printed first.
"""

from __future__ import annotations

import ast
import sys
import warnings

import numpy as np

THRESHOLD = 10.0
PRODUCT = {"strip filter": 16.0}


def log_weights(names: list[str], scheme: dict[str, float]) -> np.ndarray:
    """``log(w / mean w)`` of each component under ``scheme``."""
    w = np.array([next((v for k, v in scheme.items() if k in n), 1.0) for n in names])
    return np.log(w / w.mean())


def first_rounds(stat: np.ndarray, rounds: np.ndarray) -> np.ndarray:
    """The round at which each shoe's statistic first reached the threshold (caught only)."""
    hit = stat >= THRESHOLD
    caught = hit.any(axis=1)
    first = hit.argmax(axis=1)
    return np.sort(rounds[np.arange(len(rounds)), first][caught])


def main() -> None:
    rec = np.load(sys.argv[1])
    names = [str(x) for x in rec["names"]]
    kinds = sorted({k.split("_")[0] for k in rec.files if k.endswith("_values")})
    schemes = [PRODUCT, *(ast.literal_eval(s) for s in sys.argv[2:])]
    warnings.simplefilter("ignore", RuntimeWarning)  # NaN past a shoe's end
    for scheme in [*schemes, None]:
        out = []
        for k in kinds:
            values, rounds = rec[k + "_values"].astype(np.float64), rec[k + "_rounds"]
            if scheme is None:  # the best single component, no dilution
                stat = np.nanmax(values, axis=2)
            else:
                x = values + log_weights(names, scheme)[None, None, :]
                top = np.nanmax(x, axis=2)
                stat = top + np.log(np.nansum(np.exp(x - top[:, :, None]), axis=2) / len(names))
            stat = np.where(np.isnan(stat), -np.inf, stat)
            r = first_rounds(stat, rounds)
            med = f"{np.median(r):.1f}" if len(r) else "-"
            out.append(f"{k} {len(r)}/{len(values)} {med}")
        label = "best single component" if scheme is None else str(scheme)
        print(f"{label[:60]:60s} {' | '.join(out)}", flush=True)


if __name__ == "__main__":
    main()
