"""What the dealer panel shows: a pure projection of domain events onto LEDs and buzzer.

The station (station.py) only copies a :class:`Lights` value onto pins; every decision
of what is lit lives here, so it is tested exhaustively without hardware. The fold takes
journaled domain events (msgspec Structs tagged by ``type``, or their dict form) and the
supervisor's key switch, which is the one input the panel itself reacts to: turning the
key silences the buzzer at once, before the game core has said anything.

Rules:

- ``draw_prompt`` lights Player draws / Banker draws; the card that answers it (a
  ``card_dealt`` to that hand), ``stand``, or the result put it out.
- ``round_result`` lights the winner (Player wins, Banker wins or Tie) until the next
  round starts, the round is voided or the shoe ends.
- ``cut_card`` and ``last_round`` light Last round until a new shoe starts.
- A fault (``misdeal``, ``fault`` [unreadable card, broken link, camera lost...], an
  ``integrity_alert`` other than a pure ``advantage`` figure) lights Fault and sounds the
  buzzer. The supervisor acts by turning the key: the buzzer stops; Fault stays lit until
  the round is resumed or voided (by the supervisor: a round the misdeal policy voided
  still calls), or the key is turned back (the supervisor is done).

>>> s = Lights()
>>> s = project(s, {"type": "draw_prompt", "prompt": "player_draws"})
>>> s.lit
frozenset({'player_draws'})
>>> s = project(s, {"type": "card_dealt", "hand": "player", "position": 3})
>>> s = project(s, {"type": "round_result", "winner": "banker"})
>>> sorted(s.lit), s.buzzer
(['banker_wins'], False)
>>> s = project(s, {"type": "fault", "kind": "camera_lost"})
>>> sorted(s.lit), s.buzzer
(['banker_wins', 'fault'], True)
>>> s = supervisor_key(s, on=True)
>>> sorted(s.lit), s.buzzer
(['banker_wins', 'fault'], False)
>>> s = project(s, {"type": "round_resumed"})
>>> sorted(s.lit), s.buzzer
(['banker_wins'], False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from shoe_controller.dealer.config import LED_NAMES

__all__ = ["FAULT_EVENTS", "Lights", "event_field", "event_type", "project", "supervisor_key",
           "with_notice"]

#: Domain event types that call the supervisor (integrity_alert: see ``_is_fault``).
FAULT_EVENTS = frozenset({"misdeal", "fault", "integrity_alert"})
#: integrity_alert kinds that are information for the pit, not a stop at the table.
_INFO_ALERTS = frozenset({"advantage"})

_WINS = {"player": "player_wins", "banker": "banker_wins", "tie": "tie"}
_PROMPTS = {"player_draws": "player_draws", "banker_draws": "banker_draws"}
_RESULT_LEDS = frozenset(_WINS.values())
_PROMPT_LEDS = frozenset(_PROMPTS.values())


@dataclass(frozen=True, slots=True)
class Lights:
    """Which LEDs are lit, whether the buzzer sounds, and whether the supervisor key is
    on (a fault raised while it is on lights Fault without sounding the buzzer)."""

    lit: frozenset[str] = frozenset()
    buzzer: bool = False
    key_on: bool = False
    #: a condition of the table itself, not of the game, shown until it is over
    #: (``"disk full"``): Fault stays lit meanwhile
    notice: str | None = None

    def led(self, name: str) -> bool:
        """Whether LED ``name`` (one of config.LED_NAMES) is lit.

        >>> Lights(frozenset({"tie"})).led("tie")
        True
        """
        if name not in LED_NAMES:
            raise KeyError(f"no LED named {name!r}; LEDs are {', '.join(LED_NAMES)}")
        return name in self.lit


def event_type(event: Any) -> str:
    """The ``type`` tag of a domain event, given as a tagged msgspec Struct or a dict.

    >>> event_type({"type": "round_started", "round": 3})
    'round_started'
    """
    if isinstance(event, Mapping):
        return str(event["type"])
    tag = getattr(getattr(type(event), "__struct_config__", None), "tag", None)
    if tag is None:
        tag = getattr(event, "type", None)
    if not isinstance(tag, str):
        raise TypeError(f"not a domain event: {event!r}")
    return tag


def event_field(event: Any, name: str, default: Any = None) -> Any:
    """A field of a domain event (Struct or dict), ``default`` when it has none.

    >>> event_field({"type": "card_dealt", "hand": "player"}, "hand")
    'player'
    """
    if isinstance(event, Mapping):
        return event.get(name, default)
    return getattr(event, name, default)


def _is_fault(kind: str, event: Any) -> bool:
    if kind == "integrity_alert":
        return event_field(event, "kind") not in _INFO_ALERTS
    return kind in FAULT_EVENTS


def project(state: Lights, event: Any) -> Lights:
    """The panel after ``event`` (a domain event): pure, total over every event type.

    Unknown event types leave the panel as it was (new event types never break it).

    >>> project(Lights(), {"type": "cut_card", "when": "mid_round"}).lit
    frozenset({'last_round'})
    >>> project(Lights(frozenset({"last_round", "tie"})), {"type": "shoe_started"}).lit
    frozenset()
    """
    kind = event_type(event)
    lit = state.lit
    if kind == "shoe_started":
        return replace(state, lit=lit & {"fault"})
    if kind in ("round_started", "shoe_ended"):
        return replace(state, lit=lit - _RESULT_LEDS - _PROMPT_LEDS)
    if kind == "draw_prompt":
        led = _PROMPTS.get(str(event_field(event, "prompt")))
        return replace(state, lit=(lit - _PROMPT_LEDS) | ({led} if led else set()))
    if kind == "card_dealt":
        led = f"{event_field(event, 'hand')}_draws"
        return replace(state, lit=lit - {led})
    if kind == "round_result":
        led = _WINS.get(str(event_field(event, "winner")))
        return replace(state, lit=(lit - _PROMPT_LEDS - _RESULT_LEDS) | ({led} if led else set()))
    if kind in ("cut_card", "last_round"):
        return replace(state, lit=lit | {"last_round"})
    if kind == "round_voided":
        if event_field(event, "reason") == "misdeal":
            # Voided by the misdeal policy, not by the supervisor: the alarm stays on.
            return replace(state, lit=lit - _PROMPT_LEDS - _RESULT_LEDS)
        return replace(state, lit=lit - _PROMPT_LEDS - _RESULT_LEDS - {"fault"}, buzzer=False)
    if kind == "round_resumed":
        return replace(state, lit=lit - {"fault"}, buzzer=False)
    if _is_fault(kind, event):
        # With the key already on the supervisor is at the table: light, do not sound.
        return replace(state, lit=lit | {"fault"}, buzzer=not state.key_on)
    return state


def with_notice(state: Lights, notice: str | None) -> Lights:
    """The panel with ``notice`` shown (Fault lit; the buzzer sounds when the notice is
    new, unless the supervisor's key is on), or with no notice (Fault is left to the
    events: the fault the daemon journaled stays lit until the round is resumed).

    >>> s = with_notice(Lights(), "disk full")
    >>> sorted(s.lit), s.buzzer, s.notice
    (['fault'], True, 'disk full')
    >>> s = with_notice(supervisor_key(s, on=True), "disk full")
    >>> s.buzzer, s.notice
    (False, 'disk full')
    >>> with_notice(s, None).notice is None
    True
    """
    if notice is None:
        return replace(state, notice=None) if state.notice is not None else state
    fresh = state.notice != notice
    return replace(state, lit=state.lit | {"fault"}, notice=notice,
                   buzzer=state.buzzer or (fresh and not state.key_on))


def supervisor_key(state: Lights, on: bool) -> Lights:
    """The supervisor turned the key switch ``on`` (SUPERVISOR) or off (RUN).

    On: the alarm is acknowledged, the buzzer stops, Fault stays lit. Off: the
    supervisor is done; Fault goes out (the round resumes through the core anyway).

    >>> s = supervisor_key(Lights(frozenset({"fault"}), buzzer=True), on=True)
    >>> (sorted(s.lit), s.buzzer, s.key_on)
    (['fault'], False, True)
    >>> supervisor_key(s, on=False).lit
    frozenset()
    """
    if on:
        return replace(state, buzzer=False, key_on=True)
    return replace(state, lit=state.lit - {"fault"}, buzzer=False, key_on=False)
