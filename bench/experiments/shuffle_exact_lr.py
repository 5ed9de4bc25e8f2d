"""How much evidence of a weak shuffle the cards themselves hold: the *exact* likelihood
ratio of ``k`` GSR riffles of the previous shoe's tray against a fair shuffle, for the
codes seen so far, summed over every matching of identical cards. What no test can beat.

For one permutation Bayer and Diaconis give the ratio in closed form:
``n! C(a + n - r, n) / a**n`` with ``a = 2**k`` and ``r`` rising sequences (0 when
``r > a``). With identical copies, cards not yet dealt, the previous shoe's undealt
cards (known as a multiset only) and rounds collected by hand (Player's hand then
Banker's, or the reverse, a half each), the ratio is that closed form *averaged* over
every permutation, tray and round order that agrees with what was seen. The average is
estimated by parallel tempering over those permutations (``shuffle_exact_lr.c``, a
small C program compiled with ``cc`` on first use; pure Python would take hours a shoe)
and multi-histogram reweighting over the number of rising sequences.

Under a fair shuffle this ratio is a martingale in the cards dealt, so a fair shoe ever
reaches ``e**T`` with chance at most ``e**-T`` however often it is looked at (Ville's
inequality): ``ln(10**4) = 9.21`` nats holds the issue's 1e-4 a shoe with every look.

Trusted for six riffles and more, where the tempering runs smoothly from a random
permutation down to the rising sequences riffles leave. With four or five the coldest
replicas freeze at ``r = a`` across a sharp transition and the estimate is not to be
trusted (one came out at 190 nats from 40 cards, more than their codes can hold); such
estimates are returned as NaN.

The riffles have no strip and no cut here (the exact sum over strips and cuts is not
built); a test that knew the strip and the cut would see exactly this, so for shoes
*with* a strip and a cut these figures are an upper bound of what a test can do.

Usage (from the repository's root):
  ``python bench/experiments/shuffle_exact_lr.py check``: the estimate against a plain
  enumeration of every permutation (8 cards: seen in part, a round by hand, an undealt
  tail);
  ``python bench/experiments/shuffle_exact_lr.py shoes K dealt|hand FIRST COUNT LOOKS
  [SWEEPS]``: shoes dealt by bench/integrity.py at seeds FIRST.., K riffles (negative:
  a fair shuffle tested against -K riffles), the ratio at each look (cards seen, comma
  separated; capped at the cut card; 0: the whole shoe and the previous shoe's undealt
  cards, more than a table sees); one JSON line a shoe, then for each look the shoes at
  or above 9.21 nats, the quantiles, and the most any test could catch at 1e-4.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import integrity as b

from shoe_controller.game.events import (
    BurnIndicator,
    CardBurned,
    CardDealt,
    ResultConfirmed,
)

SOURCE = Path(__file__).with_suffix(".c")
#: ln(10**4): a fair shoe reaches it with chance at most 1e-4, every look included.
THRESHOLD = math.log(1e4)
#: The tilts the replicas sample at, exp(-lambda r): up to 8 reaches the few rising
#: sequences six riffles leave, up to 40 the sixteen of four riffles.
LAMBDAS = tuple(float(x) for x in np.concatenate([np.linspace(0.0, 8.0, 60),
                                                   np.geomspace(8.0, 40.0, 26)[1:]]))

Round = tuple[int, int, int]  # (first tray index, Player's cards, Banker's cards)


def program() -> Path:
    """The sampler, compiled once into the temporary directory."""
    exe = Path(tempfile.gettempdir()) / f"shuffle_exact_lr-{int(SOURCE.stat().st_mtime)}"
    if not exe.exists():
        subprocess.run(["cc", "-O2", "-o", str(exe), str(SOURCE), "-lm"], check=True)
    return exe


def log_weight(r: np.ndarray, a: int, n: int) -> np.ndarray:
    """``log(n! C(a + n - r, n) / a**n)``, ``-inf`` for ``r > a``.

    >>> math.isclose(float(log_weight(np.array([1]), 2, 2)[0]), math.log(3 * 2 / 4))
    True
    """
    return np.array([b.gsr_llr(int(x), a, n) for x in r])


def wham(hists: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """Log density of states over ``r`` (normalised to sum 1, i.e. under a uniformly
    random permutation that agrees with the cards) from histograms sampled at
    ``exp(-lam * r)``."""
    r = np.arange(hists.shape[1])
    nk, tot = hists.sum(axis=1), hists.sum(axis=0)
    seen = tot > 0
    f = np.zeros(len(lams))
    logg = np.full(hists.shape[1], -np.inf)
    for _ in range(20000):
        den = np.logaddexp.reduce(np.log(nk)[:, None] - lams[:, None] * r[None, :] - f[:, None],
                                  axis=0)
        logg = np.where(seen, np.log(np.where(seen, tot, 1.0)) - den, -np.inf)
        logg -= np.logaddexp.reduce(logg[seen])
        new = np.logaddexp.reduce(logg[None, :] - lams[:, None] * r[None, :], axis=1)
        done = np.max(np.abs(new - f)) < 1e-10
        f = new
        if done:
            break
    return logg


def estimate(code: Sequence[int], pos: Sequence[int], m: int, rounds: Sequence[Round],
             a: int, tail: int, seed: int, sweeps: int = 4000) -> float:
    """The log likelihood ratio: cards ``0..n-1`` numbered in tray order (each round by
    hand Player's hand first), ``code[q]`` their codes, ``pos[q]`` a new place of each
    that agrees with the cards seen (new places ``0..m-1``), cards ``tail..`` never dealt.
    NaN when the sampler froze (see below): trusted for six riffles and more only."""
    n = len(code)
    inp = (f"{n} {m} {tail} {len(rounds)} {len(LAMBDAS)} {sweeps} {sweeps // 5} {seed}\n"
           + " ".join(map(str, LAMBDAS)) + "\n" + " ".join(map(str, code)) + "\n"
           + " ".join(map(str, pos)) + "\n" + "".join(f"{s} {p} {q}\n" for s, p, q in rounds))
    out = subprocess.run([str(program())], input=inp, capture_output=True, text=True,
                         check=True).stdout
    hists = np.zeros((len(LAMBDAS), n + 2))
    for line in out.splitlines():
        k, r, count = line.split()
        if k != "swaps":
            hists[int(k), int(r)] = float(count)
    if n > 100 and np.count_nonzero(hists[-1]) < 2:
        # the coldest replica frozen at one r: four or five riffles, where the tempering
        # passes a sharp transition and the density of states there is not to be trusted
        # (an estimate of 190 nats from 40 cards, more than their codes hold, was one)
        return math.nan
    logg = wham(hists, np.array(LAMBDAS))
    lw = log_weight(np.arange(n + 2), a, n)
    ok = np.isfinite(logg) & np.isfinite(lw)
    return float(np.logaddexp.reduce(logg[ok] + lw[ok])) if ok.any() else -math.inf


def _trays(n: int, rounds: Sequence[Round]) -> Iterator[list[int]]:
    for bits in itertools.product((0, 1), repeat=len(rounds)):
        tray = list(range(n))
        for (s, p, q), bit in zip(rounds, bits, strict=True):
            if bit:
                tray[s : s + p + q] = tray[s + p : s + p + q] + tray[s : s + p]
        yield tray


def enumerated(code: Sequence[int], pos: Sequence[int], m: int, rounds: Sequence[Round],
               a: int, tail: int) -> float:
    """The same ratio by a plain average over every permutation, round order and order of
    the undealt cards (tiny decks only): the reference ``check`` compares against."""
    n = len(code)
    seen = {t: code[q] for q, t in enumerate(pos) if t < m}
    rs = []
    for perm in itertools.permutations(range(n)):
        if any(perm[q] in seen and seen[perm[q]] != code[q] for q in range(n)):
            continue
        for tray in _trays(n, rounds):
            for rest in itertools.permutations(tray[tail:]):
                t = tray[:tail] + list(rest)
                rs.append(1 + sum(perm[t[i + 1]] < perm[t[i]] for i in range(n - 1)))
    return float(np.logaddexp.reduce(log_weight(np.array(rs), a, n)) - math.log(len(rs)))


def _compositions(n: int, a: int) -> Iterator[tuple[int, ...]]:
    if a == 1:
        yield (n,)
        return
    for x in range(n + 1):
        for rest in _compositions(n - x, a - 1):
            yield (x, *rest)


def dropped(code: Sequence[int], seen: Sequence[int], a: int) -> float:
    """The same ratio for a dealt tray, derived another way (tiny decks only): the
    ``a``-shuffle as the deck cut into ``a`` packets (multinomial sizes) and cards dropped
    one at a time from a packet with chance proportional to what is left in it; summed
    over which old copy each seen card is; ``seen`` the codes of the first new cards."""
    n = len(code)
    copies: dict[int, list[int]] = {}
    for q, c in enumerate(code):
        copies.setdefault(c, []).append(q)
    total = 0.0
    for sizes in _compositions(n, a):
        log_sizes = (math.lgamma(n + 1) - sum(math.lgamma(x + 1) for x in sizes)
                     - n * math.log(a))
        ends = list(itertools.accumulate(sizes))
        for cards in itertools.product(*(copies[c] for c in seen)):
            if len(set(cards)) < len(cards):
                continue
            nxt = [e - x for e, x in zip(ends, sizes, strict=True)]
            left, logp = list(sizes), log_sizes
            for t, q in enumerate(cards):
                j = next(i for i, e in enumerate(ends) if q < e)
                if nxt[j] != q:
                    break
                logp += math.log(left[j] / (n - t))
                left[j] -= 1
                nxt[j] += 1
            else:
                total += math.exp(logp)
    fair, left_of = 0.0, {c: len(v) for c, v in copies.items()}
    for t, c in enumerate(seen):
        fair += math.log(left_of[c] / (n - t))
        left_of[c] -= 1
    return math.log(total) - fair


def check() -> None:
    rng = random.Random(5)
    worst = 0.0
    for trial in range(8):
        code = [c for c in range(4) for _ in range(2)]
        rng.shuffle(code)
        ids = list(range(8))
        if trial % 4 == 3:
            rng.shuffle(ids)
        else:
            ids = b.gsr(b.gsr([str(i) for i in ids], rng), rng)  # type: ignore[arg-type]
        pos = [0] * 8
        for t, q in enumerate(ids):
            pos[int(q)] = t
        m = (8, 5, 3, 6)[trial % 4]
        rounds = [(0, 2, 2)] if trial >= 4 else []
        tail = 5 if trial % 2 else 8
        want = enumerated(code, pos, m, rounds, 4, tail)
        got = estimate(code, pos, m, rounds, 4, tail, trial + 1, sweeps=100000)
        worst = max(worst, abs(got - want))
        print(f"8 cards, seen {m}, rounds by hand {len(rounds)}, undealt {8 - tail}: "
              f"enumerated {want:.4f}, estimated {got:.4f}")
    print(f"largest difference {worst:.4f} nats")
    worst = 0.0
    for codes, copies, riffles, m in ((3, 4, 2, 6), (6, 4, 1, 8), (5, 4, 1, 7), (4, 3, 2, 8),
                                      (8, 3, 1, 7), (3, 4, 1, 12)):
        code = [c for c in range(codes) for _ in range(copies)]
        rng.shuffle(code)
        ids = list(range(len(code)))
        for _ in range(riffles):
            ids = b.gsr(ids, rng)  # type: ignore[arg-type]
        pos = [0] * len(code)
        for t, q in enumerate(ids):
            pos[q] = t
        want = dropped(code, [code[q] for q in ids[:m]], 2 ** riffles)
        got = estimate(code, pos, m, [], 2 ** riffles, len(code), m, sweeps=20000)
        worst = max(worst, abs(got - want))
        print(f"{len(code)} cards, {2 ** riffles} packets, seen {m}: dropped one by one "
              f"{want:.3f}, estimated {got:.3f}")
    print(f"largest difference {worst:.3f} nats")


def bench_shoe(k: int, by_hand: bool, rng: random.Random
               ) -> tuple[list[int], list[int], list[Round], int]:
    """A fair previous shoe dealt by bench/integrity.py, its tray riffled ``k`` times (no
    strip, no cut; ``k < 0``: shuffled fairly): (codes, new places, rounds, cards dealt),
    cards numbered as ``estimate`` wants them."""
    previous = b.fresh_cards()
    rng.shuffle(previous)
    tagged, dealt = b.by_position(list(b.shoe_events(1, previous, lambda c: None)))
    tray = b.discard_stack([str(j) for j in range(len(previous))], tagged, by_hand, rng)
    new = list(tray)
    if k < 0:
        rng.shuffle(new)
    for _ in range(max(k, 0)):
        new = b.gsr(new, rng)
    # cards numbered in the true tray's order, so the sampler starts inside the
    # posterior (it need not find the round orders by itself); a round by hand is the
    # segment of its two hands, whichever the tray holds first
    order = [int(card) for card in tray]
    rounds: list[Round] = []
    hands: dict[str, list[int]] = {"player": [], "banker": []}
    at = 0
    for ev in tagged:
        if isinstance(ev, BurnIndicator | CardBurned) or (isinstance(ev, CardDealt)
                                                           and not by_hand):
            at += 1
        elif isinstance(ev, CardDealt):
            hands[ev.hand].append(int(ev.card))
        elif isinstance(ev, ResultConfirmed) and by_hand:
            pl, bk = hands["player"], hands["banker"]
            if pl and bk:
                first = len(pl) if order[at] in pl else len(bk)
                rounds.append((at, first, len(pl) + len(bk) - first))
            at += len(pl) + len(bk)
            hands = {"player": [], "banker": []}
    number = {card: q for q, card in enumerate(order)}
    codes = {c: i for i, c in enumerate(sorted(set(previous)))}
    pos = [0] * len(order)
    for t, card in enumerate(new):
        pos[number[int(card)]] = t
    return [codes[previous[card]] for card in order], pos, rounds, dealt


def upper95(hits: int, count: int) -> float:
    """Clopper-Pearson's one-sided 95 % upper bound of a proportion.

    >>> round(upper95(0, 30), 3), upper95(30, 30)
    (0.095, 1.0)
    """
    if hits >= count:
        return 1.0
    lo, hi = hits / count, 1.0
    for _ in range(60):  # the p at which seeing at most `hits` has chance 5 %
        p = (lo + hi) / 2
        cdf = sum(math.comb(count, i) * p ** i * (1 - p) ** (count - i) for i in range(hits + 1))
        lo, hi = (p, hi) if cdf > 0.05 else (lo, p)
    return hi


def most_caught(values: Sequence[float], alpha: float = 1e-4) -> tuple[float, float]:
    """The most any test could catch at false-alarm rate ``alpha`` (Neyman-Pearson: for
    every ``t``, caught <= P(log LR > t) + e**t alpha), from these shoes' exact log
    likelihood ratios: (the bound with the fraction seen, with its 95 % upper bound).

    >>> most_caught([1.0] * 30)[0] < 0.01
    True
    """
    grid = np.linspace(0.0, math.log(1 / alpha), 93)
    seen = min(float(np.mean(np.asarray(values) > t)) + math.exp(t) * alpha for t in grid)
    upper = min(upper95(int(np.sum(np.asarray(values) > t)), len(values)) + math.exp(t) * alpha
                for t in grid)
    return min(seen, 1.0), min(upper, 1.0)


def shoes(k: int, by_hand: bool, first: int, count: int, looks: list[int], sweeps: int
          ) -> None:
    """Looks are cards seen, capped at the cut card; 0 is the whole new shoe *and* the
    previous shoe's undealt cards seen (more than any table sees: an upper bound)."""
    found: dict[int, list[float]] = {}
    for seed in range(first, first + count):
        code, pos, rounds, dealt = bench_shoe(k, by_hand, random.Random(seed))
        line: dict[str, object] = {"riffles": k, "by_hand": by_hand, "seed": seed}
        for look in looks:
            m = min(look, len(code) - b.CUT_LEFT) if look else len(code)
            value = estimate(code, pos, m, rounds, 2 ** abs(k), dealt if look else len(code),
                             seed, sweeps)
            found.setdefault(m, []).append(value)
            line[str(m)] = round(value, 2)
        print(json.dumps(line), flush=True)
    for m, vals in found.items():
        v = np.array([x for x in vals if not math.isnan(x)])
        if not len(v):
            print(f"{k} riffles, {m} cards seen: every estimate froze (not to be trusted)")
            continue
        print(f"{k} riffles, {'by hand' if by_hand else 'dealt order'}, {m} cards seen: "
              f"{int((v >= THRESHOLD).sum())}/{len(v)} at or above {THRESHOLD:.2f} nats; "
              f"min {v.min():.1f}, 10% {np.quantile(v, 0.1):.1f}, median {np.median(v):.1f}, "
              f"max {v.max():.1f}; the most any test could catch at 1e-4: "
              f"{most_caught(v)[0]:.0%} (95 % bound {most_caught(v)[1]:.0%})"
              + (f"; {len(vals) - len(v)} froze, left out" if len(v) < len(vals) else ""))


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check()
    else:
        shoes(int(sys.argv[2]), sys.argv[3] == "hand", int(sys.argv[4]), int(sys.argv[5]),
              [int(x) for x in sys.argv[6].split(",")],
              int(sys.argv[7]) if len(sys.argv) > 7 else 4000)
