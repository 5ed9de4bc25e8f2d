"""`shoe-controller odds`: options, JSON contract, readable table and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

from shoe_controller.cli import main
from shoe_controller.game.rules import BET_NAMES


def run_json(capsys, *argv: str) -> dict:
    assert main(["odds", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_for_a_fresh_eight_deck_shoe(capsys):
    out = run_json(capsys)
    assert set(out["house_edge"]) == set(BET_NAMES)
    assert {"banker", "player", "tie"} <= set(out["probabilities"])
    assert round(out["probabilities"]["banker"], 6) == 0.458597
    assert round(out["house_edge"]["banker"] * 100, 4) == 1.0579
    assert out["exact"]["house_edge"]["player_pair"] == "43/415"
    assert out["cards_left"] == 416
    assert out["elapsed_ms"] >= 0


def test_removed_cards_and_commission_mode_change_the_figures(capsys):
    fresh = run_json(capsys, "--decks", "1", "--no-commission")
    # all four aces and all the 5s out: no ace-ace or 5-5 pair is possible
    out = run_json(
        capsys, "--decks", "1", "--removed", "AS AH AD AC 5S 5h 5D 5C", "--no-commission"
    )
    assert out["cards_left"] == 44
    assert out["commission"] is False
    pair = Fraction(out["exact"]["probabilities"]["player_pair"])
    assert pair == Fraction(11 * 4 * 3, 44 * 43)
    assert out["house_edge"]["banker"] != fresh["house_edge"]["banker"]


def test_readable_table_by_default(capsys):
    assert main(["odds", "--decks", "6"]) == 0
    text = capsys.readouterr().out
    assert "312 cards left of 6 decks" in text
    for bet in BET_NAMES:
        assert bet in text


def test_bad_input_exits_2_naming_the_problem(capsys):
    assert main(["odds", "--removed", "AS 1X"]) == 2
    err = capsys.readouterr()
    assert "token 2" in err.err and "'1X'" in err.err and err.out == ""
    assert main(["odds", "--decks", "1", "--removed", "KD KD"]) == 2
    assert "KD removed 2 times" in capsys.readouterr().err
    assert main(["odds", "--decks", "0"]) == 2


def test_console_script_end_to_end():
    proc = subprocess.run(
        [sys.executable, "-m", "shoe_controller.cli", "odds", "--json", "--decks", "8"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    assert json.loads(proc.stdout)["exact"]["probabilities"]["player_pair"] == "31/415"


def test_config_file_paytable_decks_and_commission(tmp_path, capsys):
    cfg = tmp_path / "table.toml"
    cfg.write_text(
        "[table]\nid = 'T1'\n[rules]\ndecks = 6\ncommission = 'no_commission'\n"
        "[paytable]\ntie = 9.0\n"
    )
    out = run_json(capsys, "--config", str(cfg))
    assert out["decks"] == 6 and out["commission"] is False
    p_tie = Fraction(out["exact"]["probabilities"]["tie"])
    assert Fraction(out["exact"]["house_edge"]["tie"]) == 1 - 10 * p_tie
    # options given on the command line win over the file
    out = run_json(capsys, "--config", str(cfg), "--decks", "8", "--commission")
    assert out["decks"] == 8 and out["commission"] is True


def test_bad_config_file_exits_2(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[rules]\ndecks = 'eight'\n")
    assert main(["odds", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "decks" in err and "bad.toml" in err
