"""shuffle_integrity's neighbour relation and fingerprint history against hand-written
expectations (issue 15's campaign: unread cards, 64-bit fingerprints on both sides of
2**63 and the history's shoe window were free to change)."""

from __future__ import annotations

from shoe_controller.game.shuffle_integrity import FingerprintSet, neighbours_in


def test_an_unread_card_breaks_only_its_own_two_adjacencies() -> None:
    # AS ? KD QH AS: the unread card links nothing; KD-QH and QH-AS are still adjacent
    got = neighbours_in(["AS", None, "KD", "QH", "AS"])
    assert got == {"KD": {"QH"}, "QH": {"KD", "AS"}, "AS": {"QH"}}
    assert neighbours_in([None, None]) == {}


# BLAKE2b fingerprints are uniform over 64 bits: half of them are 2**63 or more
BIG, BIGGER, TOP = 2**63, 2**63 + 1, 2**64 - 1


def test_fingerprints_on_both_sides_of_2_63_stay_distinct() -> None:
    s = FingerprintSet.of([(1, 1), (BIG, 1), (BIGGER, 2)])
    assert (s.shoes_of(1), s.shoes_of(BIG), s.shoes_of(BIGGER)) == ((1,), (1,), (2,))
    assert s.matches([BIGGER], exclude_shoe=1) == 1
    assert s.matches([BIG], exclude_shoe=1) == 0
    # a small and a big fingerprint added together, beside a big one already known
    t = FingerprintSet.of([(TOP, 1)]).union([5, TOP - 1], shoe=2)
    assert (t.shoes_of(TOP), t.shoes_of(TOP - 1), t.shoes_of(5), len(t)) == ((1,), (2,), (2,), 3)


def test_the_history_keeps_exactly_the_last_keep_shoes_shoes() -> None:
    s = FingerprintSet.of([(10, 1), (20, 2)])
    # shoe 3 with keep_shoes=2 keeps shoes 2 and 3 (numbered within 2 of 3), drops 1
    kept = s.union([30], shoe=3, keep_shoes=2)
    assert (kept.shoes_of(10), kept.shoes_of(20), kept.shoes_of(30)) == ((), (2,), (3,))
    # without keep_shoes nothing is dropped
    every = s.union([30, 10], shoe=3)
    assert (every.shoes_of(10), every.shoes_of(20), every.shoes_of(30)) == ((1, 3), (2,), (3,))


def test_window_fingerprints_are_the_documented_keyed_blake2b() -> None:
    import hashlib

    from shoe_controller.game.shuffle_integrity import window_fingerprints

    seq = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS"]
    salt = bytes(range(70))  # longer than BLAKE2b's 64-byte key: its first 64 bytes key it

    def ref(window: list[str]) -> int:
        h = hashlib.blake2b(" ".join(window).encode(), key=salt[:64], digest_size=8)
        return int.from_bytes(h.digest(), "big")

    want = [ref(seq[i:i + 8]) for i in range(3)]
    assert window_fingerprints(seq, salt) == want
    assert window_fingerprints(seq, salt, start=1) == want[1:]


def test_adjacency_mean_and_variance_match_every_ordering() -> None:
    import itertools
    import math
    import statistics

    from shoe_controller.game.shuffle_integrity import DECK_ORDER, adjacency_test

    # six cards with a repeated code: count deck-order neighbours over all 720 orders
    cards = ["AS", "AS", "2S", "KH", "3D", "9C"]
    counts = [sum(1 for a, b in itertools.pairwise(order) if b in DECK_ORDER[a])
              for order in itertools.permutations(cards)]
    t = adjacency_test(cards, DECK_ORDER)
    assert t.pairs == 5
    assert math.isclose(t.mean, statistics.fmean(counts), abs_tol=1e-12)
    assert math.isclose(t.sd, statistics.pstdev(counts), abs_tol=1e-12)
    # fewer than four cards: no statistic; codes missing from the relation relate nothing
    short = adjacency_test([], DECK_ORDER)
    assert (short.pairs, short.count, short.mean, short.sd) == (0, 0, 0.0, 0.0)
    other = adjacency_test(["AS", "2S", "3S", "4S"], {"AS": frozenset({"2S"})})
    assert (other.pairs, other.count) == (3, 1)
