"""The release policy: nothing of an unconfirmed round leaves under on_result."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.game.cards import parse_card
from shoe_controller.game.events import encode_event
from shoe_controller.game.inputs import CardSeen, ConfirmResult, NewShoe, Void
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.publish.release import SAFE_WHILE_OPEN, ReleaseState, release_all, step
from tests.test_publish_helpers import shoe_batches


@dataclass(frozen=True)
class E:
    seq: int
    type: str
    data: dict[str, Any]


def entries(events) -> list[E]:
    out = []
    for i, ev in enumerate(events, 1):
        data = json.loads(encode_event(ev)) if not isinstance(ev, dict) else ev
        out.append(E(i, data["type"], data))
    return out


def card_codes(data: dict[str, Any]) -> set[str]:
    """Every card code anywhere in an event."""
    found: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, str) and len(v) == 2 and v[0] in "A23456789TJQK" and v[1] in "SHDC":
            found.add(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(data)
    return found


def check_never_early(batches: list[list[E]], policy: str = "on_result") -> list[E]:
    """Feed batches; after each, every released card must belong to a confirmed or voided
    round (or to no round); return everything released, in order."""
    state = ReleaseState(policy)
    released: list[E] = []
    closed: set[tuple[int, int]] = set()
    round_of_card: dict[int, tuple[int, int]] = {}
    for batch in batches:
        for e in batch:
            if e.type in ("result_confirmed", "round_voided"):
                closed.add((e.data["shoe"], e.data["round"]))
            if e.type in ("shoe_ended", "shoe_started"):  # a round left open is dead
                closed.update(k for k in round_of_card.values())
            if e.data.get("round") is not None:
                round_of_card[e.seq] = (e.data["shoe"], e.data["round"])
            state, out = step(state, e)
            released.extend(out)
        for r in released:
            key = round_of_card.get(r.seq)
            if key is not None and card_codes(r.data) and r.type not in SAFE_WHILE_OPEN:
                assert key in closed, f"{r.type} of round {key} released before confirmation"
    seqs = [r.seq for r in released]
    assert seqs == sorted(seqs), "released out of journal order"
    assert len(set(seqs)) == len(seqs), "released twice"
    return released


def test_whole_shoe_under_on_result_releases_everything_once_in_order():
    batches = [entries(b) for b in shoe_batches(3)]
    # renumber across batches
    seq = 0
    fixed = []
    for b in batches:
        fixed.append([E(seq := seq + 1, e.type, e.data) for e in b])
    released = check_never_early(fixed)
    assert [r.seq for r in released] == list(range(1, seq + 1))  # the shoe ends: all out


def test_per_card_releases_at_once():
    events = entries(next(iter([[e for b in shoe_batches(5, max_rounds=2) for e in b]])))
    state = ReleaseState("per_card")
    for e in events:
        state, out = step(state, e)
        assert out == (e,)


def test_round_start_goes_out_but_cards_wait_for_the_confirmation():
    s = ReleaseState()
    evs = entries([
        {"type": "round_started", "shoe": 1, "round": 4},
        {"type": "bets_open", "shoe": 1, "round": 4, "bets": ["player"]},
        {"type": "card_dealt", "shoe": 1, "round": 4, "card": "QH"},
        {"type": "round_paused", "shoe": 1, "round": 4, "reason": "x"},  # after a card: held
        {"type": "draw_prompt", "shoe": 1, "round": 4, "prompt": "stand"},
        {"type": "round_result", "shoe": 1, "round": 4},
    ])
    outs = []
    for e in evs:
        s, out = step(s, e)
        outs.append([o.type for o in out])
    assert outs == [["round_started"], ["bets_open"], [], [], [], []]
    assert len(s.held) == 4
    s, out = step(s, E(7, "result_confirmed", {"type": "result_confirmed", "shoe": 1,
                                                "round": 4}))
    assert [o.seq for o in out] == [3, 4, 5, 6, 7]
    assert not s.held and s.open_round is None


def test_void_releases_the_round():
    s = ReleaseState()
    s, _ = release_all(s, entries([{"type": "round_started", "shoe": 1, "round": 1},
                                   {"type": "card_dealt", "shoe": 1, "round": 1,
                                    "card": "QH"}]))
    s, out = step(s, E(3, "round_voided", {"type": "round_voided", "shoe": 1, "round": 1,
                                          "reason": "x"}))
    assert [o.seq for o in out] == [2, 3]


def test_a_confirmation_of_another_round_does_not_release():
    s = ReleaseState()
    s, _ = release_all(s, entries([{"type": "round_started", "shoe": 1, "round": 2},
                                   {"type": "card_dealt", "shoe": 1, "round": 2,
                                    "card": "QH"}]))
    s, out = step(s, E(3, "result_confirmed", {"type": "result_confirmed", "shoe": 1,
                                              "round": 1}))
    assert out == ()


def test_a_new_shoe_releases_a_dead_round():
    s = ReleaseState()
    s, _ = release_all(s, entries([{"type": "round_started", "shoe": 1, "round": 2},
                                   {"type": "card_dealt", "shoe": 1, "round": 2,
                                    "card": "QH"}]))
    s, out = step(s, E(3, "shoe_ended", {"type": "shoe_ended", "shoe": 1, "rounds": 2,
                                        "reason": "new_shoe"}))
    assert [o.seq for o in out] == [2, 3]


def test_a_carried_misdeal_card_waits_for_the_round_it_joins():
    """The extra card of round 1 becomes the first card of round 2: round 1's
    confirmation must not reveal it."""
    shoe = Shoe(Rules(confirm="button", extra_card="carry", burn="none"))
    batches = [list(shoe.apply(NewShoe()))]
    for c in ["7S", "KC", "9D", "5D", "3H", "2C"]:  # 2C: extra card, carried
        batches.append(list(shoe.apply(CardSeen(parse_card(c)))))
    batches.append(list(shoe.apply(ConfirmResult())))
    after_confirm_1 = sum(len(b) for b in batches)
    for c in ["8S", "7H", "2D"]:  # P 2C 7H = 9, a natural
        batches.append(list(shoe.apply(CardSeen(parse_card(c)))))
    batches.append(list(shoe.apply(ConfirmResult())))
    flat = entries([e for b in batches for e in b])
    assert any(e.type == "misdeal" and e.data["policy"] == "carry" for e in flat)
    state, released = release_all(ReleaseState(), flat[:after_confirm_1])
    assert not any("2C" in card_codes(r.data) for r in released)
    assert not any(r.type == "misdeal" for r in released)
    state, rest = release_all(state, flat[after_confirm_1:])
    assert any(r.type == "misdeal" for r in rest)
    assert [r.seq for r in released + rest] == sorted(r.seq for r in released + rest)


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="release policy"):
        ReleaseState("whenever")


inputs = st.lists(
    st.one_of(
        st.sampled_from(["confirm", "void", "new"]),
        st.sampled_from([c + s for c in "A23456789TJQK" for s in "SHDC"]),
    ),
    min_size=1, max_size=80,
)


@settings(max_examples=60, deadline=None)
@given(inputs, st.sampled_from(["burn", "void", "carry"]))
def test_property_no_card_of_an_unconfirmed_round_is_ever_released(script, policy):
    shoe = Shoe(Rules(confirm="button", extra_card=policy, burn="none", rounds="auto"))
    batches = [list(shoe.apply(NewShoe()))]
    for token in script:
        if token == "confirm":
            inp: Any = ConfirmResult()
        elif token == "void":
            inp = Void("test")
        elif token == "new":
            inp = NewShoe()
        else:
            inp = CardSeen(parse_card(token))
        batches.append(list(shoe.apply(inp)))
    seq = 0
    numbered = []
    for b in batches:
        numbered.append([E(seq := seq + 1, d["type"], d)
                         for d in (json.loads(encode_event(e)) for e in b)])
    check_never_early(numbered)
