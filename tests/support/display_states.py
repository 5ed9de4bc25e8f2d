"""Display states of every table state, taken from a real shoe played by the game core.

The game core deals a seeded, shuffled 8-deck shoe; the display projection folds every
event; a snapshot is taken the first time each state shows (after round 30, so the roads
are long enough to scroll). States the virtual shoe never reaches on its own (a pause, a
misdeal, a void) are the real state with the event the core would add folded on top.

>>> states = table_states()
>>> sorted(states) == sorted(STATE_NAMES)
True
>>> states["player_draws"]["prompt"], states["paused"]["pause_reason"]
('player_draws', 'foreign_card')
"""

from __future__ import annotations

import random
from typing import Any

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.display_state import DisplayState, project, to_payload
from shoe_controller.game.inputs import CardSeen, CutCardSeen, NewShoe
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe

TABLE = "T9"

#: Every state the table display must show (issue 16), in a sensible order.
STATE_NAMES = ("no_shoe", "new_shoe", "bets_open", "dealing", "player_draws", "banker_draws",
               "result", "paused", "misdeal", "voided", "last_round", "shoe_ended")


def _deck(seed: int) -> list[Any]:
    cards: list[Any] = [c for _ in range(8) for c in ALL_CARDS]
    random.Random(seed).shuffle(cards)
    cards.insert(len(cards) - 60, None)  # the cut card, 60 cards from the end
    return cards


def table_states(seed: int = 7, table: str = TABLE, after_round: int = 30) -> dict[str, dict]:
    """Payload per state name (see STATE_NAMES)."""
    shoe = Shoe(Rules())
    state = DisplayState(table=table)
    out: dict[str, dict] = {"no_shoe": to_payload(state)}

    def fold(events: Any) -> None:
        nonlocal state
        for ev in events:
            state = project(state, ev)
            kind = ev.type
            rnd = state.round or 0
            late = rnd > after_round
            if kind == "shoe_started":
                out.setdefault("new_shoe", to_payload(state))
            elif not late:
                continue
            elif kind == "bets_open":
                out.setdefault("bets_open", to_payload(state))
            elif kind == "card_dealt" and len(state.player_cards) + len(state.banker_cards) == 3:
                out.setdefault("dealing", to_payload(state))
                if "paused" not in out:
                    paused = project(state, {"type": "round_paused", "shoe": state.shoe,
                                             "round": rnd, "reason": "foreign_card"})
                    out["paused"] = to_payload(paused)
            elif kind == "draw_prompt" and ev.prompt in ("player_draws", "banker_draws"):
                out.setdefault(ev.prompt, to_payload(state))
                if ev.prompt == "banker_draws" and "misdeal" not in out:
                    out["misdeal"] = to_payload(project(state, {
                        "type": "misdeal", "shoe": state.shoe, "round": rnd,
                        "kind": "extra_card", "card": None, "policy": "burn"}))
            elif kind == "round_result":
                out.setdefault("result", to_payload(state))
                if "voided" not in out:
                    voided = project(state, {"type": "round_voided", "shoe": state.shoe,
                                             "round": rnd + 1, "reason": "supervisor"})
                    out["voided"] = to_payload(voided)
            elif kind == "last_round":
                out.setdefault("last_round", to_payload(state))
            elif kind == "shoe_ended":
                out.setdefault("shoe_ended", to_payload(state))

    fold(shoe.apply(NewShoe()))
    for card in _deck(seed):
        fold(shoe.apply(CutCardSeen() if card is None else CardSeen(card)))
        if "shoe_ended" in out:
            break
    # the last round's bets are open until its first card: show the warning with them
    missing = set(STATE_NAMES) - set(out)
    assert not missing, f"the shoe never showed {missing}"
    return out
