"""`[gpio]`: which BCM pins the dealer station's LEDs, buzzer and buttons sit on.

Import-light on purpose (only msgspec): the configuration loader imports this module by
name, and it must not pull gpiozero in just to validate a file.

Wiring (see docs/daemon.md): every LED is driven active-high through its resistor; every
button and the supervisor key switch close to ground and use the Pi's internal pull-up.
A pin of ``0`` means "not fitted" for the optional inputs (reveal buttons).

>>> cfg = GpioConfig()
>>> cfg.led_fault, cfg.buzzer, cfg.pin_factory
(20, 12, 'auto')
>>> sorted(cfg.led_pins())[:2]
['banker_draws', 'banker_wins']
>>> import msgspec
>>> msgspec.convert({"led_tie": 5}, GpioConfig)
Traceback (most recent call last):
...
msgspec.ValidationError: pin 5 is used twice: led_player_draws and led_tie
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["LED_NAMES", "GpioConfig"]

#: The dealer LEDs, in the order they sit on the panel (left to right).
LED_NAMES: tuple[str, ...] = (
    "player_draws",
    "banker_draws",
    "player_wins",
    "banker_wins",
    "tie",
    "last_round",
    "fault",
)

# BCM pins a Pi 4/5 exposes on its 40-pin header as plain GPIO.
_USABLE = range(2, 28)


class GpioConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """BCM pin numbers of the dealer station, and how to reach them.

    Defaults follow the wiring diagram in docs/daemon.md.
    """

    #: LED: Player must draw a third card.
    led_player_draws: int = 5
    #: LED: Banker must draw a third card.
    led_banker_draws: int = 6
    #: LED: Player won the round (lit until the next round starts).
    led_player_wins: int = 13
    #: LED: Banker won the round.
    led_banker_wins: int = 19
    #: LED: the round is a tie.
    led_tie: int = 26
    #: LED: the cut card came out, this shoe's last round is on.
    led_last_round: int = 21
    #: LED: a fault needs the supervisor (misdeal, unreadable/foreign card, link, camera).
    led_fault: int = 20
    #: Active buzzer (on/off), sounds with a fault until the supervisor turns the key.
    buzzer: int = 12
    #: Button: open a new round (used when rounds open by button).
    button_new_round: int = 17
    #: Button: confirm the round's result (the release point of the card feeds).
    button_confirm: int = 27
    #: Button: reveal Player's hand (insurance tables); 0 = not fitted.
    button_reveal_player: int = 0
    #: Button: reveal Banker's hand (insurance tables); 0 = not fitted.
    button_reveal_banker: int = 0
    #: Supervisor key switch, closed = SUPERVISOR: turning it on pauses the round and
    #: silences the buzzer; turning it back off resumes.
    supervisor_key: int = 24
    #: Button, honoured only while the supervisor key is on: void the round in progress.
    button_void: int = 25
    #: Debounce time of every button and of the key switch, in seconds.
    bounce_time: float = 0.05
    #: "auto": the Pi's real pins (gpiozero picks lgpio/RPi.GPIO); "mock": gpiozero's
    #: MockFactory (off a Pi, in `simulate` and tests).
    pin_factory: Literal["auto", "mock"] = "auto"
    #: Draw the LEDs in the terminal (useful with mock pins).
    terminal_leds: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.bounce_time <= 1:
            raise ValueError(f"bounce_time: expected 0-1 seconds, got {self.bounce_time}")
        seen: dict[int, str] = {}
        for name, pin in self.all_pins().items():
            if pin not in _USABLE:
                raise ValueError(f"{name}: expected a BCM GPIO pin 2-27, got {pin}")
            if pin in seen:
                raise ValueError(f"pin {pin} is used twice: {seen[pin]} and {name}")
            seen[pin] = name

    def led_pins(self) -> dict[str, int]:
        """LED name -> pin, for every LED of :data:`LED_NAMES`."""
        return {name: getattr(self, f"led_{name}") for name in LED_NAMES}

    def button_pins(self) -> dict[str, int]:
        """Button name -> pin, fitted buttons only (the key switch included, as ``key``)."""
        pins = {
            "new_round": self.button_new_round,
            "confirm": self.button_confirm,
            "reveal_player": self.button_reveal_player,
            "reveal_banker": self.button_reveal_banker,
            "key": self.supervisor_key,
            "void": self.button_void,
        }
        return {name: pin for name, pin in pins.items() if pin != 0}

    def all_pins(self) -> dict[str, int]:
        """Config key -> pin for every fitted device (used for the duplicate check)."""
        keys = [f"led_{n}" for n in LED_NAMES] + [
            "buzzer", "button_new_round", "button_confirm", "button_reveal_player",
            "button_reveal_banker", "supervisor_key", "button_void",
        ]
        optional = {"button_reveal_player", "button_reveal_banker"}
        return {k: getattr(self, k) for k in keys if k not in optional or getattr(self, k) != 0}
