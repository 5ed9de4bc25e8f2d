"""Configuration: the example file is complete and valid; errors name file, key, problem."""

from __future__ import annotations

import tomllib
from pathlib import Path

import msgspec
import pytest

from shoe_controller.cli import main
from shoe_controller.config import (
    SECTIONS,
    ConfigError,
    load_config,
    load_config_text,
    section_types,
)
from shoe_controller.game.rules import Rules

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "table.toml"


def test_example_file_is_valid_and_all_defaults():
    cfg = load_config(EXAMPLE)
    # all defaults but one, on purpose: casino tables need the confirm button (README)
    assert cfg.rules == msgspec.structs.replace(Rules(), confirm="button")
    for section, struct in section_types().items():
        if struct is not None and section not in ("rules", "paytable", "bet_availability"):
            # (insurance is both cfg.insurance and cfg.rules.insurance)
            assert getattr(cfg, section) == struct(), section


def test_example_file_shows_every_key_of_every_section():
    text = EXAMPLE.read_text()
    data = tomllib.loads(text)
    assert list(data) == list(SECTIONS)
    for section, struct in section_types().items():
        if struct is None:
            continue
        keys = [f.encode_name for f in msgspec.inspect.type_info(struct).fields]
        if section == "rules":
            keys = [k for k in keys if k not in ("paytable", "bet_availability", "insurance")]
        for key in keys:
            shown = key in data[section] or f"# {key} =    (unset by default)" in text
            assert shown, f"[{section}] {key} missing from examples/table.toml"


def test_values_reach_the_rules():
    cfg = load_config_text(
        """
        [table]
        id = "vip-3"
        [rules]
        decks = 6
        burn = "fixed"
        burn_cards = 3
        cut_card = "one_more_round"
        extra_card = "carry"
        commission = "no_commission"
        rounds = "button"
        confirm = "button"
        [paytable]
        tie = 9
        [bet_availability]
        player_bonus = 0
        tie = 999
        """
    )
    r = cfg.rules
    assert (cfg.table.id, r.decks, r.burn, r.burn_cards, r.cut_card, r.extra_card) == (
        "vip-3", 6, "fixed", 3, "one_more_round", "carry")
    assert (r.commission, r.rounds, r.confirm) == ("no_commission", "button", "button")
    assert r.paytable.tie == 9.0 and cfg.paytable is r.paytable
    assert r.bet_availability.player_bonus == 0 and r.bet_availability.tie == 999


def test_insurance_section_reaches_the_rules():
    row = ('{ side = "banker", stage = "2/2", player = "unrevealed", banker = "8", '
           'insures = "player", odds = 9 }')
    cfg = load_config_text('[rules]\nconfirm = "button"\n'
                           f'[insurance]\nenabled = true\nreveal = "button"\nrows = [\n{row},\n]')
    assert cfg.rules.insurance is cfg.insurance and cfg.insurance.enabled
    assert cfg.rules.insurance.rows[0].odds == 9.0
    with pytest.raises(ConfigError, match=r'\[insurance\] reveal: reveal buttons need \[rules\]'):
        load_config_text('[insurance]\nenabled = true\nreveal = "button"')
    expected = r"\[insurance\] rows\[0\]\.stage: expected one of '2/2', '3/2', got '4/2'"
    with pytest.raises(ConfigError, match=expected):
        load_config_text('[insurance]\nrows = [{side="banker", stage="4/2", player="1", '
                         'banker="2", insures="tie", odds=2}]')


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[rules]\ndecks = "eight"',
         "cfg.toml: [rules] decks: expected an integer 1-16, got 'eight'"),
        ("[rules]\ndecks = 17", "cfg.toml: [rules] decks: expected an integer 1-16, got 17"),
        ('[rules]\nburn = "often"', "cfg.toml: [rules] burn: expected one of 'decks', "
         "'first_card', 'fixed', 'none', got 'often'"),
        ("[rules]\ndeck = 8", "cfg.toml: [rules] deck: unknown key (known keys: decks, burn,"),
        ("[paytable]\ntie = -1", "cfg.toml: [paytable] tie: expected a number 0-10000, got -1"),
        ("[paytable]\ntie = true", "cfg.toml: [paytable] tie: expected a number 0-10000, got true"),
        ('[bet_availability]\ntie = "never"', "cfg.toml: [bet_availability] tie: expected an "
         "integer 0-1000, got 'never'"),
        ("[rules.paytable]\ntie = 9", "cfg.toml: [rules] paytable: put it in its own [paytable]"),
        ("[tabel]\nid = 'x'", "cfg.toml: [tabel]: unknown section (known sections: table,"),
        ('[table]\nid = "has space"', "cfg.toml: [table] id: expected text matching"),
        ("table = 3", "cfg.toml: [table]: expected a table [table], got 3"),
        ("[rules\ndecks = 8", "cfg.toml: not valid TOML:"),
    ],
)
def test_errors_name_file_key_and_problem(text, message):
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    assert str(info.value).startswith(message), str(info.value)


def test_other_sections_are_validated_by_their_owner_struct():
    types = section_types()
    if types["gpio"] is not None:
        with pytest.raises(ConfigError, match=r"\[gpio\] led_tyi: unknown key"):
            load_config_text("[gpio]\nled_tyi = 4", "cfg.toml")
    if types["mqtt"] is not None:
        cfg = load_config_text('[mqtt]\nhost = "broker.casino"', "cfg.toml")
        assert cfg.mqtt.host == "broker.casino"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)


def test_config_check_command(tmp_path, capsys):
    assert main(["config", "check", str(EXAMPLE)]) == 0
    assert "OK" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[rules]\nextra_card = "keep"\n')
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: [rules] extra_card: expected one of 'burn', 'carry', 'void', got 'keep'" in err
    assert main(["config", "check", str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["config", "check", "--json", str(EXAMPLE)]) == 0
    assert '"decks": 8' in capsys.readouterr().out
