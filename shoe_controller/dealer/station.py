"""The dealer station on real pins: gpiozero LEDBoard, Buzzer and Buttons.

Buttons turn into game inputs handed to ``submit(input, origin)`` (the daemon puts them
on its queue; gpiozero calls back from its own thread, so ``submit`` must be
thread-safe). What the LEDs show is decided elsewhere, by the pure
:func:`shoe_controller.dealer.lights.project`; :meth:`Station.show` only copies it onto
the pins. Off a Pi, ``pin_factory = "mock"`` uses gpiozero's own MockFactory, so the
same code runs in `simulate` and in tests, where pressing a button is driving its mock
pin low.

>>> from shoe_controller.dealer.config import GpioConfig
>>> got = []
>>> st = Station(GpioConfig(pin_factory="mock", bounce_time=0), lambda i, o: got.append(o))
>>> st.press("confirm")
>>> got
['confirm']
>>> st.close()
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any, TextIO

from gpiozero import Button, Buzzer, LEDBoard
from gpiozero.pins.mock import MockFactory

from shoe_controller.dealer.config import LED_NAMES, GpioConfig
from shoe_controller.dealer.lights import Lights
from shoe_controller.game.inputs import (
    ConfirmResult,
    Input,
    NewRound,
    Pause,
    Resume,
    Reveal,
    Void,
)

__all__ = ["KEY_OFF", "KEY_ON", "Station", "StationError", "render_lights"]

#: ``origin`` strings of the key switch; the daemon also feeds them to lights.supervisor_key.
KEY_ON = "key_on"
KEY_OFF = "key_off"

Submit = Callable[[Input, str], None]

_LABELS = {
    "player_draws": "P DRAW",
    "banker_draws": "B DRAW",
    "player_wins": "PLAYER",
    "banker_wins": "BANKER",
    "tie": "TIE",
    "last_round": "LAST",
    "fault": "FAULT",
}
_COLOURS = {
    "player_draws": "bold blue",
    "banker_draws": "bold red",
    "player_wins": "bold blue",
    "banker_wins": "bold red",
    "tie": "bold green",
    "last_round": "bold yellow",
    "fault": "bold white on red",
}


class StationError(RuntimeError):
    """The station's pins cannot be opened (no GPIO library, pin busy, ...)."""


def render_lights(lights: Lights) -> Any:
    """The panel as a rich Text line: lit LEDs in colour, dark ones dimmed.

    >>> render_lights(Lights(frozenset({"tie"}))).plain
    '○ P DRAW  ○ B DRAW  ○ PLAYER  ○ BANKER  ● TIE  ○ LAST  ○ FAULT'
    """
    from rich.text import Text

    text = Text()
    for i, name in enumerate(LED_NAMES):
        if i:
            text.append("  ")
        lit = name in lights.lit
        text.append(("● " if lit else "○ ") + _LABELS[name], _COLOURS[name] if lit else "dim")
    if lights.buzzer:
        text.append("  ♪ BUZZER", "bold red blink")
    if lights.notice:
        text.append(f"  {lights.notice.upper()}", "bold red")
    return text


class Station:
    """LEDs, buzzer and buttons of one dealer station, per ``[gpio]``.

    ``terminal`` (a stream) draws the LEDs there on every change; default: stderr when
    ``cfg.terminal_leds`` is set, else nothing.
    """

    def __init__(self, cfg: GpioConfig, submit: Submit, terminal: TextIO | None = None) -> None:
        self.cfg = cfg
        self._submit = submit
        self.factory: Any = MockFactory() if cfg.pin_factory == "mock" else None
        kw: dict[str, Any] = {"pin_factory": self.factory}
        bounce = cfg.bounce_time or None
        self._devices: list[Any] = []
        try:
            # _order: without it gpiozero sorts keyword LEDs by name.
            self.leds = self._own(LEDBoard(**cfg.led_pins(), _order=LED_NAMES, **kw))
            self.buzzer = self._own(Buzzer(cfg.buzzer, **kw))
            self.buttons: dict[str, Button] = {
                name: self._own(Button(pin, bounce_time=bounce, **kw))
                for name, pin in cfg.button_pins().items()
            }
        except Exception as exc:  # gpiozero raises many kinds; all mean "no pins"
            self.close()
            raise StationError(
                f"cannot open the dealer station's GPIO pins ({type(exc).__name__}: {exc}); "
                'off a Raspberry Pi set [gpio] pin_factory = "mock"'
            ) from exc
        self._wire()
        self.terminal = terminal if terminal is not None else (
            sys.stderr if cfg.terminal_leds else None)
        self.lights = Lights()
        self._sounding = False

    def _own(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def _wire(self) -> None:
        on_press: dict[str, Callable[[], tuple[Input, str] | None]] = {
            "new_round": lambda: (NewRound(), "new_round"),
            "confirm": lambda: (ConfirmResult(), "confirm"),
            "reveal_player": lambda: (Reveal("player"), "reveal_player"),
            "reveal_banker": lambda: (Reveal("banker"), "reveal_banker"),
            "key": lambda: (Pause("supervisor key", source="key"), KEY_ON),
            # Void only with the key on: a dealer alone cannot cancel a round.
            "void": lambda: ((Void("supervisor", source="button", key=True), "void")
                             if self.key_on else None),
        }
        for name, button in self.buttons.items():
            button.when_pressed = self._handler(on_press[name])
        if "key" in self.buttons:
            self.buttons["key"].when_released = self._handler(
                lambda: (Resume(source="key"), KEY_OFF))

    def _handler(self, make: Callable[[], tuple[Input, str] | None]) -> Callable[[], None]:
        def fire() -> None:
            item = make()
            if item is not None:
                self._submit(*item)

        return fire

    @property
    def key_on(self) -> bool:
        """Whether the supervisor key switch is turned to SUPERVISOR."""
        key = self.buttons.get("key")
        return bool(key is not None and key.is_pressed)

    def show(self, lights: Lights) -> None:
        """Put ``lights`` on the LEDs and the buzzer (and the terminal, if drawing)."""
        if lights == self.lights and self._devices:
            return
        self.leds.value = tuple(name in lights.lit for name in LED_NAMES)
        if lights.buzzer and not self._sounding:
            self.buzzer.beep(on_time=0.25, off_time=0.25)
        elif not lights.buzzer and self._sounding:
            self.buzzer.off()
        self._sounding = lights.buzzer
        self.lights = lights
        if self.terminal is not None:
            from rich.console import Console

            Console(file=self.terminal, highlight=False).print(render_lights(lights))

    def led_values(self) -> dict[str, bool]:
        """LED name -> whether its pin is driven on (read back from gpiozero)."""
        return {name: bool(v) for name, v in zip(LED_NAMES, self.leds.value, strict=True)}

    def mock_pin(self, name: str) -> Any:
        """The MockFactory pin of button ``name`` (tests and the virtual dealer)."""
        if self.factory is None:
            raise StationError("mock_pin() needs [gpio] pin_factory = \"mock\"")
        return self.factory.pin(self.cfg.button_pins()[name])

    def press(self, name: str) -> None:
        """Press and release button ``name`` on the mock pins (a virtual dealer's finger)."""
        pin = self.mock_pin(name)
        pin.drive_low()
        pin.drive_high()

    def turn_key(self, on: bool) -> None:
        """Turn the supervisor key switch on the mock pins."""
        pin = self.mock_pin("key")
        if on:
            pin.drive_low()
        else:
            pin.drive_high()

    def close(self) -> None:
        """Release every pin (LEDs off, buzzer silent)."""
        for device in reversed(self._devices):
            # closing must never mask the reason we are closing
            with contextlib.suppress(Exception):
                device.close()
        self._devices.clear()

