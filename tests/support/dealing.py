"""Dealing a shoe of given cards through the real shoe machine, for the tests of the
game-protection projection."""

from __future__ import annotations

from typing import Any

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.shoe import Shoe

LEFT_THE_SHOE = ("BurnIndicator", "CardBurned", "CardDealt")


def deal(cards: list[str], shoe: Shoe, cut_left: int = 16) -> list[Any]:
    """The events of ``shoe`` dealing ``cards`` to its end, the cut card ``cut_left``
    cards from the end."""
    events = list(shoe.apply(I.NewShoe()))
    for i, code in enumerate(cards):
        if i == len(cards) - cut_left:
            events += shoe.apply(I.CutCardSeen())
        events += shoe.apply(I.CardSeen(parse_card(code)))
        if shoe.state.phase == "ended":
            break
    return events


def left_the_shoe(events: list[Any]) -> tuple[list[str], list[tuple[int, str] | None]]:
    """The cards that left the shoe, in order, and where each went (round and hand of a
    dealt card, None for a burned one)."""
    out = [e for e in events if type(e).__name__ in LEFT_THE_SHOE]
    return ([e.card for e in out],
            [(e.round, e.hand) if type(e).__name__ == "CardDealt" else None for e in out])


def tray(cards: list[str], events: list[Any]) -> list[str]:
    """The discard tray collected in dealt order, then the cards never dealt."""
    out = left_the_shoe(events)[0]
    return out + cards[len(out):]


def hand_tray(cards: list[str], events: list[Any], rng: Any) -> list[str]:
    """The discard tray collected hand by hand: each round Player's cards then Banker's,
    or the reverse, chosen per round with ``rng``; burned cards where they fell; then the
    cards never dealt."""
    out, places = left_the_shoe(events)
    rounds: dict[int, dict[str, list[str]]] = {}
    for card, place in zip(out, places, strict=True):
        if place is not None:
            rounds.setdefault(place[0], {"player": [], "banker": []})[place[1]].append(card)
    collected: list[str] = []
    done: set[int] = set()
    for k, (card, place) in enumerate(zip(out, places, strict=True)):
        if place is None:
            collected.append(card)
        elif place[0] not in done and all(not p or p[0] != place[0] for p in places[k + 1:]):
            hands = rounds[place[0]]
            first = rng.choice(["player", "banker"])
            second = "banker" if first == "player" else "player"
            collected += hands[first] + hands[second]
            done.add(place[0])
    return collected + cards[len(out):]
