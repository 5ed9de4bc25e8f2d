"""Shuffle-integrity tests on constructed shoes, and the SQLite fingerprint store."""

from __future__ import annotations

import itertools
import random
import sqlite3
import statistics

import pytest

from shoe_controller.fingerprints import FingerprintStore
from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.shuffle_integrity import (
    DECK_ORDER,
    WINDOW,
    FingerprintSet,
    adjacency_test,
    longest_order_run,
    longest_suit_run,
    neighbours_in,
    window_fingerprints,
)


def shuffled(seed, decks=8):
    cards = [c.code for c in ALL_CARDS for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def test_runs_on_constructed_sequences():
    assert longest_order_run(["KS", "QS", "JS", "JH", "JD", "2C"]) == 5  # down a suit, a rank
    assert longest_order_run(["AS", "3S", "5S"]) == 1
    assert longest_order_run(["AS", None, "2S"]) == 1  # an unread card breaks the run
    assert longest_suit_run(["AH", "9H", "KH", "2H", "3S"]) == 4
    assert longest_order_run([]) == 0


def test_adjacency_mean_and_variance_are_exact():
    # every order of a small multiset, brute force
    cards = ["AS", "2S", "2S", "3S", "AH", "KD"]
    counts = [
        sum(1 for a, b in itertools.pairwise(perm) if b in DECK_ORDER[a])
        for perm in itertools.permutations(cards)
    ]
    t = adjacency_test(cards, DECK_ORDER)
    assert t.mean == pytest.approx(statistics.fmean(counts), abs=1e-12)
    assert t.sd**2 == pytest.approx(statistics.pvariance(counts), abs=1e-12)


def test_adjacency_with_a_reference_order():
    previous = shuffled(1)
    same = adjacency_test(previous, neighbours_in(previous))
    assert same.count == same.pairs and same.z > 20
    fresh = adjacency_test(shuffled(2), neighbours_in(previous))
    assert abs(fresh.z) < 5


def test_fair_shoes_stay_far_below_the_thresholds():
    for seed in range(5):
        cards = shuffled(seed)[:400]
        assert longest_order_run(cards) < 10
        assert longest_suit_run(cards) < 16
        assert adjacency_test(cards, DECK_ORDER).z < 6


def test_stacked_shoes_are_far_above_them():
    new_decks = [c.code for _ in range(8) for c in ALL_CARDS]
    assert longest_order_run(new_decks) == 13
    rank_sorted = sorted(shuffled(3), key=lambda c: "A23456789TJQK".index(c[0]))
    assert longest_order_run(rank_sorted) >= 32
    # one riffle of new decks: runs broken, but about half the neighbours survive
    rng = random.Random(4)
    left, right, riffled = new_decks[:208], new_decks[208:], []
    while left or right:
        for pile in (left, right):
            k = rng.randint(1, 3)
            riffled += pile[:k]
            del pile[:k]
    assert adjacency_test(riffled, DECK_ORDER).z > 15


def test_window_fingerprints_find_a_repeated_sequence_only_with_the_same_salt():
    a, b = shuffled(5), shuffled(6)
    fa = window_fingerprints(a, b"salt")
    assert len(fa) == len(a) - WINDOW + 1
    known = FingerprintSet.of((fp, 1) for fp in fa)
    assert known.matches(window_fingerprints(b, b"salt")) == 0
    # the same shoe cut at another place still repeats almost every window
    cut = a[100:] + a[:100]
    assert known.matches(window_fingerprints(cut, b"salt")) >= len(fa) - 2 * WINDOW
    assert known.matches(window_fingerprints(cut, b"pepper")) == 0
    assert known.matches(window_fingerprints(a, b"salt"), exclude_shoe=1) == 0
    # windows with an unread card are skipped
    assert len(window_fingerprints(["AS"] * 7 + [None] + ["2S"] * 8, b"s")) == 1


def test_fingerprint_store_in_sqlite(tmp_path):
    path = str(tmp_path / "daemon.sqlite3")
    cards = shuffled(8)
    with FingerprintStore.open(path) as store:
        salt = store.salt
        assert len(salt) == 32
        fps = window_fingerprints(cards, salt)
        assert store.add_shoe(1, fps) == len(set(fps))
        assert store.add_shoe(1, fps) == 0  # idempotent
        store.add_shoe(2, window_fingerprints(shuffled(9), salt))
        store.add_shoe(3, window_fingerprints(shuffled(10), salt))
    with FingerprintStore.open(path) as store:
        assert store.salt == salt  # the salt persists with the database
        everything = store.load()
        assert everything.matches(fps) == len(fps)
        assert store.load(history=2).matches(fps) == 0  # only shoes 2 and 3
        assert store.forget(keep=1) > 0
        assert len(store.load()) == len(set(window_fingerprints(shuffled(10), salt)))
    # no card code in clear anywhere in the database
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT shoe, fp FROM shoe_fingerprints").fetchall()
    conn.close()
    assert all(isinstance(s, int) and isinstance(fp, int) for s, fp in rows)
    raw = (tmp_path / "daemon.sqlite3").read_bytes()
    assert " ".join(cards[:WINDOW]).encode() not in raw


def test_fingerprint_store_with_a_given_salt_and_a_bad_path(tmp_path):
    with FingerprintStore.open(str(tmp_path / "a.sqlite3"), salt=b"from-a-secret-file") as s:
        assert s.salt == b"from-a-secret-file"
    with pytest.raises(OSError, match="fingerprint store"):
        FingerprintStore.open(str(tmp_path / "missing-dir" / "x.sqlite3"))
