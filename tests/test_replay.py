"""`shoe-controller replay`: golden files, JSON lines, errors with exit status 2.

Golden cases live in tests/golden/replay/: NAME.txt is the input (a ``# args:`` line
gives the options), NAME.out the expected human output, NAME.jsonl the expected JSON
lines, NAME.err the expected error (exit 2, nothing on stdout). Regenerate after an
intended change with ``UPDATE_GOLDEN=1 pytest tests/test_replay.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shoe_controller.cli import main
from shoe_controller.game.events import decode_event
from shoe_controller.game.replay_text import ReplayParseError, parse_replay, replay_inputs
from shoe_controller.game.tableau import coup

GOLDEN = Path(__file__).parent / "golden" / "replay"
CASES = sorted(p.stem for p in GOLDEN.glob("*.txt"))
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def _args(name: str) -> list[str]:
    for line in (GOLDEN / f"{name}.txt").read_text().splitlines():
        if line.startswith("# args:"):
            return line.removeprefix("# args:").split()
    return []


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(["replay", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _check(path: Path, actual: str) -> None:
    if UPDATE:
        path.write_text(actual)
    assert path.exists(), f"missing golden file {path.name} (UPDATE_GOLDEN=1 creates it)"
    assert actual == path.read_text(), f"{path.name} differs"


@pytest.mark.parametrize("name", CASES)
def test_golden(name, capsys):
    src = str(GOLDEN / f"{name}.txt")
    code, out, err = _run([*_args(name), src], capsys)
    if name.startswith("bad_"):
        assert code == 2 and out == ""
        _check(GOLDEN / f"{name}.err", err.replace(src, f"{name}.txt"))
        return
    assert code == 0, err
    _check(GOLDEN / f"{name}.out", out)
    assert main(["replay", "--json", *_args(name), src]) == 0
    jsonl = capsys.readouterr().out
    _check(GOLDEN / f"{name}.jsonl", jsonl)


def _value(code: str) -> int:
    return 1 if code[0] == "A" else 0 if code[0] in "TJQK" else int(code[0])


def test_full_shoe_results_follow_the_tableau_and_account_for_every_card():
    """The 8-deck golden checked independently: every result re-dealt by the tableau,
    all 416 cards accounted for (burned, dealt or discarded after the end)."""
    lines = (GOLDEN / "full_shoe_8deck.jsonl").read_text().splitlines()
    events = [decode_event(line.encode()) for line in lines]
    assert all(json.loads(line)["type"] == e.type for line, e in zip(lines, events, strict=True))
    results = [e for e in events if e.type == "round_result"]
    assert [r.round for r in results] == list(range(1, len(results) + 1))
    assert len(results) > 60
    for r in results:
        p, b = list(r.player), list(r.banker)
        order = [p[0], b[0], p[1], b[1], *p[2:], *b[2:]]
        pv, bv = coup([_value(c) for c in order] + [0, 0])
        assert (len(pv), len(bv)) == (len(p), len(b))
        assert (r.player_total, r.banker_total) == (sum(pv) % 10, sum(bv) % 10)
        expected = "player" if r.player_total > r.banker_total else (
            "banker" if r.banker_total > r.player_total else "tie")
        assert r.winner == expected
        assert r.settlement["player"] == {"player": 1.0, "banker": -1.0, "tie": 0.0}[r.winner]
        assert r.settlement["banker"] == {"player": -1.0, "banker": 0.95, "tie": 0.0}[r.winner]
    counted = sum(1 for e in events if e.type in ("burn_indicator", "card_burned", "card_dealt"))
    counted += sum(1 for e in events if e.type == "misdeal")
    assert counted == 416
    assert events[-1].type == "misdeal" or any(e.type == "shoe_ended" for e in events)


def test_round_result_json_has_the_contract_fields():
    line = next(
        line for line in (GOLDEN / "burn_face.jsonl").read_text().splitlines()
        if '"round_result"' in line
    )
    data = json.loads(line)
    for key in ("round", "player", "banker", "player_total", "banker_total", "winner",
                "settlement"):
        assert key in data
    assert data["player"] == ["7S", "9D"] and data["banker"] == ["KC", "5D", "3H"]
    assert data["winner"] == "banker" and data["settlement"]["banker"] == 0.95
    assert data["settlement"]["player"] == -1 and data["settlement"]["tie"] == -1


def test_parse_errors_name_token_position_and_line():
    with pytest.raises(ReplayParseError) as info:
        parse_replay("AS KD  # fine\n\n  QH  ZZ\n")
    e = info.value
    assert (e.token.text, e.token.number, e.token.line, e.token.column) == ("ZZ", 4, 3, 7)
    assert str(e).startswith("token 4 'ZZ' (line 3, column 7): not a card or keyword")


def test_tokens_are_case_insensitive_with_ten_and_orientation():
    inputs = replay_inputs("shoe 10s Ts ts^ tsV cut new result pause resume void reveal_p")
    names = [type(i).__name__ for i in inputs]
    assert names == ["NewShoe", "CardSeen", "CardSeen", "CardSeen", "CardSeen", "CutCardSeen",
                     "NewRound", "ConfirmResult", "Pause", "Resume", "Void", "Reveal"]
    assert [i.orientation for i in inputs[1:5]] == [None, None, "up", "down"]
    assert {i.card.code for i in inputs[1:5]} == {"TS"}


def test_stdin_and_exit_status_in_a_real_process():
    exe = [sys.executable, "-m", "shoe_controller.cli", "replay"]
    ok = subprocess.run([*exe, "--no-burn", "-"], input="9H 2C KD 3S", text=True,
                        capture_output=True, timeout=60)
    assert ok.returncode == 0
    assert "round 1  P 9H KD = 9  B 2C 3S = 5  PLAYER  (natural)" in ok.stdout
    bad = subprocess.run([*exe, "-"], input="9H 2C KD 3S\n9H 2C XX", text=True,
                         capture_output=True, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    assert "token 7 'XX' (line 2, column 7)" in bad.stderr


def test_bad_options_and_missing_file(tmp_path, capsys):
    code, out, err = _run(["--decks", "0", str(GOLDEN / "void.txt")], capsys)
    assert code == 2 and out == "" and "--decks" in err
    code, out, err = _run([str(tmp_path / "nope.txt")], capsys)
    assert code == 2 and out == "" and "cannot read" in err


# -- describe(): the human line of each event (docs/game.md: one line per event) --------

def test_describe_result_flags_insurance_and_orientation():
    from shoe_controller.game import events as E
    from shoe_controller.game.describe import describe

    r = E.RoundResult(shoe=1, round=3, player=("9S", "9H"), banker=("KC", "2D", "4H"),
                      player_total=8, banker_total=6, winner="player", natural=True,
                      player_pair=True, banker_pair=False, settlement={},
                      insurance=(E.InsuranceSettlement(1, "player", "banker", 1.5, "2/2",
                                                       "won", 1.5),
                                 E.InsuranceSettlement(2, "banker", "tie", 8.0, "3/2",
                                                       "lost", -1.0)))
    assert describe(r) == (
        "round 3  P 9S 9H = 8  B KC 2D 4H = 6  PLAYER  (natural, player pair)"
        "  insurance #1 player vs banker: won +1.5  insurance #2 banker vs tie: lost -1")
    r2 = E.RoundResult(shoe=1, round=4, player=("AS", "2S"), banker=("3C", "3D"),
                       player_total=3, banker_total=6, winner="banker", natural=False,
                       player_pair=False, banker_pair=True, settlement={})
    assert describe(r2) == "round 4  P AS 2S = 3  B 3C 3D = 6  BANKER  (banker pair)"
    dealt = {o: E.CardDealt(shoe=1, round=2, hand="banker", position=3, card="7D",
                            orientation=o) for o in ("up", "down", None)}
    assert describe(dealt["up"]) == "round 2  banker card 3: 7D (upright)"
    assert describe(dealt["down"]) == "round 2  banker card 3: 7D (upside down)"
    assert describe(dealt[None]) == "round 2  banker card 3: 7D"


def test_describe_events_with_and_without_a_round():
    from shoe_controller.game import events as E
    from shoe_controller.game.describe import describe

    assert describe(E.RoundPaused(shoe=2, round=None, reason="link down")) == (
        "shoe 2  PAUSED (link down)")
    assert describe(E.RoundPaused(shoe=2, round=5, reason="link down")) == (
        "round 5  PAUSED (link down)")
    assert describe(E.Misdeal(shoe=2, round=None, kind="card_while_paused", card=None,
                              policy="burn")) == (
        "shoe 2  MISDEAL card while paused: (unread card) -> burn")
    assert describe(E.CardBurned(shoe=2, card=None)) == "shoe 2  burned (unread card)"
    assert describe(E.Fault(shoe=2, round=None, kind="link_down")) == "shoe 2  FAULT link_down"
    assert describe(E.Fault(shoe=2, round=1, kind="camera_lost", detail="no frames")) == (
        "round 1  FAULT camera_lost: no frames")
    assert describe(E.IntegrityAlert(shoe=2, round=None, kind="foreign_card")) == (
        "shoe 2  ALERT foreign_card")
    assert describe(E.IntegrityAlert(shoe=2, round=7, kind="edge_sorting",
                                     evidence={"test": "key", "statistic": 31.5})) == (
        "round 7  ALERT edge_sorting  statistic=31.5 test=key")


def test_describe_an_event_without_a_line_of_its_own():
    """shoe_analysis (and any event type describe() has no line for) is described from
    its fields; the analysis names the three bets with the lowest house edge."""
    from shoe_controller.game import events as E
    from shoe_controller.game.describe import describe

    a = E.ShoeAnalysis(shoe=1, round=9, probabilities={}, expected_value={},
                       house_edge={"tie": -0.004, "banker": 0.010579, "player": 0.012351,
                                   "either_pair": 0.5, "player_pair": 0.1036})
    assert describe(a) == (  # lowest first, not by name
        "round 9  analysis: lowest house edge tie -0.4000%, banker 1.0579%, player 1.2351%")
    e = E.ShoeAnalysis(shoe=1, round=9, probabilities={}, expected_value={}, house_edge={})
    assert describe(e) == "round 9  analysis: lowest house edge "


def test_describe_an_event_type_it_does_not_know():
    from shoe_controller.game import events as E
    from shoe_controller.game.describe import describe

    class Later(E.DomainEvent, frozen=True, tag="later_thing"):
        round: int | None
        weight: int
        note: str = "x"

    assert describe(Later(shoe=3, round=4, weight=2)) == "round 4  later_thing note=x weight=2"
    assert describe(Later(shoe=3, round=None, weight=2)) == "later_thing note=x weight=2"

    class Roundless(E.DomainEvent, frozen=True, tag="roundless_thing"):
        weight: int

    assert describe(Roundless(shoe=3, weight=5)) == "roundless_thing weight=5"
