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
