"""The dealer station through gpiozero's own MockFactory: buttons in, LEDs out."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import msgspec
import pytest

from shoe_controller.dealer.config import LED_NAMES, GpioConfig
from shoe_controller.dealer.lights import Lights, project
from shoe_controller.dealer.station import KEY_OFF, KEY_ON, Station
from shoe_controller.game.inputs import ConfirmResult, NewRound, Pause, Resume, Reveal, Void


@pytest.fixture
def station() -> Iterator[tuple[Station, list]]:
    got: list = []
    cfg = GpioConfig(pin_factory="mock", bounce_time=0, button_reveal_player=22,
                     button_reveal_banker=23)
    st = Station(cfg, lambda inp, origin: got.append((inp, origin)))
    yield st, got
    st.close()


def test_each_button_pin_driven_low_submits_its_input(station):
    st, got = station
    cfg = st.cfg
    for pin in (cfg.button_new_round, cfg.button_confirm, cfg.button_reveal_player,
                cfg.button_reveal_banker):
        p = st.factory.pin(pin)
        p.drive_low()
        p.drive_high()
    assert got == [
        (NewRound(), "new_round"),
        (ConfirmResult(), "confirm"),
        (Reveal("player"), "reveal_player"),
        (Reveal("banker"), "reveal_banker"),
    ]


def test_void_needs_the_supervisor_key(station):
    st, got = station
    st.press("void")
    assert got == []  # a dealer alone cannot void
    st.turn_key(True)
    st.press("void")
    st.turn_key(False)
    assert got == [
        (Pause("supervisor key", source="key"), KEY_ON),
        (Void("supervisor", source="button", key=True), "void"),  # audited (issue 14)
        (Resume(source="key"), KEY_OFF),
    ]


def test_events_light_the_right_pins(station):
    st, _ = station
    lights = Lights()
    cfg = st.cfg
    for event, expect_on in [
        ({"type": "round_started"}, set()),
        ({"type": "draw_prompt", "prompt": "player_draws"}, {"led_player_draws"}),
        ({"type": "card_dealt", "hand": "player", "position": 3}, set()),
        ({"type": "draw_prompt", "prompt": "banker_draws"}, {"led_banker_draws"}),
        ({"type": "round_result", "winner": "banker"}, {"led_banker_wins"}),
        ({"type": "cut_card", "when": "between_rounds"}, {"led_banker_wins", "led_last_round"}),
        ({"type": "misdeal", "kind": "extra_card"},
         {"led_banker_wins", "led_last_round", "led_fault"}),
        ({"type": "round_voided"}, {"led_last_round"}),
    ]:
        lights = project(lights, event)
        st.show(lights)
        on_pins = {getattr(cfg, f"led_{n}") for n in LED_NAMES if f"led_{n}" in expect_on}
        for name in LED_NAMES:
            pin = getattr(cfg, f"led_{name}")
            assert st.factory.pin(pin).state == (pin in on_pins), (event, name)
        assert st.led_values() == {n: f"led_{n}" in expect_on for n in LED_NAMES}


def test_fault_sounds_the_buzzer_until_the_key(station):
    st, _ = station
    buzzer = st.factory.pin(st.cfg.buzzer)
    lights = project(Lights(), {"type": "fault", "kind": "link_down"})
    st.show(lights)
    deadline = time.monotonic() + 2
    while not any(s.state for s in buzzer.states) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert any(s.state for s in buzzer.states), "the buzzer pin never went high"
    from shoe_controller.dealer.lights import supervisor_key

    st.show(supervisor_key(lights, on=True))
    assert not st.buzzer.is_active and buzzer.state is False
    assert st.led_values()["fault"]


def test_terminal_rendering_draws_each_change():
    out = io.StringIO()
    st = Station(GpioConfig(pin_factory="mock"), lambda i, o: None, terminal=out)
    try:
        st.show(project(Lights(), {"type": "round_result", "winner": "tie"}))
    finally:
        st.close()
    assert "● TIE" in out.getvalue() and "○ FAULT" in out.getvalue()


def test_config_rejects_duplicate_and_out_of_range_pins():
    with pytest.raises(msgspec.ValidationError, match="pin 27 is used twice"):
        msgspec.convert({"buzzer": 27}, GpioConfig)
    with pytest.raises(msgspec.ValidationError, match="led_fault: expected a BCM GPIO pin"):
        msgspec.convert({"led_fault": 40}, GpioConfig)
    with pytest.raises(msgspec.ValidationError, match="unknown field `led_dragon`"):
        msgspec.convert({"led_dragon": 3}, GpioConfig)


@pytest.mark.filterwarnings("ignore::gpiozero.PinFactoryFallback")
def test_auto_factory_off_a_pi_fails_with_a_clear_message(monkeypatch):
    from gpiozero import Device

    from shoe_controller.dealer.station import StationError

    # gpiozero picks the real pin library; on this machine there is none (not a Pi).
    if "raspberry pi" in _board_model().lower():  # pragma: no cover - on a real Pi
        pytest.skip("a real Pi has a pin library: the auto factory works here")
    monkeypatch.setattr(Device, "pin_factory", None)
    with pytest.raises(StationError, match='pin_factory = "mock"'):
        Station(GpioConfig(pin_factory="auto"), lambda i, o: None)


def _board_model() -> str:
    try:
        with open("/proc/device-tree/model", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""
