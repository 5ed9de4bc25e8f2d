"""`shoe-controller roads`: results strings and replay files, JSON and text."""

from __future__ import annotations

import json
import subprocess
import sys

from shoe_controller.cli import main
from shoe_controller.game.roads import build_roads, roads_to_dict


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["roads", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_results_json_has_every_road_and_grid(capsys) -> None:
    code, out, err = run_cli(capsys, "--results", "TBBPPPTBPPPPPPPPBB", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["results"] == "TBBPPPTBPPPPPPPPBB"
    assert data["big_road"][0] == {"col": 0, "row": 0, "outcome": "banker", "ties": 1,
                                   "column": 0, "depth": 0, "player_pair": False,
                                   "banker_pair": False}
    # the 8-long Player streak turns right along the bottom row
    tail = [(c["col"], c["row"]) for c in data["big_road"] if c["column"] == 3]
    assert tail[-3:] == [(3, 5), (4, 5), (5, 5)]
    for name in ("big_eye_boy", "small_road", "cockroach_pig"):
        assert set(data[name]) <= {"red", "blue"}
        assert [c["mark"] for c in data["grids"][name]] == data[name]
    assert data["ask"]["banker"]["big_eye_boy"] in ("red", "blue")
    assert data == {**roads_to_dict(build_roads(data["results"])), "results": data["results"]}


def test_results_text_draws_the_grids(capsys) -> None:
    code, out, _ = run_cli(capsys, "--results", "BBBBBBBP")
    assert code == 0
    lines = out.splitlines()
    big = lines[lines.index("Big Road (digit: ties on the cell)") + 1:][:6]
    assert big[0].startswith("B P ")
    assert big[5].startswith("B B ")  # the dragon tail
    assert "Ask Banker:" in out and "Banker 7  Player 1  Tie 0" in out


def test_bad_results_exit_2_naming_the_result(capsys) -> None:
    code, out, err = run_cli(capsys, "--results", "BPQ", "--json")
    assert code == 2 and out == ""
    assert "result 3: 'Q'" in err


def test_results_and_file_are_exclusive(capsys, tmp_path) -> None:
    code, out, err = run_cli(capsys, "--results", "B", str(tmp_path / "x.txt"))
    assert code == 2 and out == "" and "either" in err
    code, out, err = run_cli(capsys, str(tmp_path / "missing.txt"))
    assert code == 2 and out == "" and "missing.txt" in err


def test_console_script_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "shoe_controller.cli", "roads", "--results",
                           "BPB", "--json"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["big_eye_boy"] == ["red"]


SHOE = """
# no burn; deal order P B P B
9H 2C KD 3C      # P 9 natural v B 5: player
2S 4D 3S 4H      # P 5 v B 8 natural (banker pair): banker
7S 5H KC 2D      # 7 v 7: tie
5C 6C VOID       # round 4 voided: never on the roads
8H 2H KH 3H      # P 8 natural v 5: player
"""


def test_replay_file_gives_the_roads_of_the_confirmed_rounds(capsys, tmp_path) -> None:
    path = tmp_path / "shoe.txt"
    path.write_text(SHOE)
    code, out, err = run_cli(capsys, str(path), "--no-burn", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["results"] == "PBTP"
    assert [(c["col"], c["row"], c["outcome"], c["ties"], c["banker_pair"])
            for c in data["big_road"]] == [(0, 0, "player", 0, False),
                                           (1, 0, "banker", 1, True),
                                           (2, 0, "player", 0, False)]
    assert data["bead_plate"][0]["natural"] and data["big_eye_boy"] == ["red"]


def test_replay_file_shows_the_last_shoe(capsys, tmp_path) -> None:
    path = tmp_path / "two.txt"
    path.write_text(SHOE + "\nSHOE 2S 4D 3S 4H\n")
    code, out, err = run_cli(capsys, str(path), "--no-burn", "--json")
    assert code == 0, err
    assert json.loads(out)["results"] == "B"


def test_replay_from_stdin_as_text() -> None:
    proc = subprocess.run([sys.executable, "-m", "shoe_controller.cli", "roads", "-",
                           "--no-burn"], input=SHOE, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Banker 1  Player 2  Tie 1" in proc.stdout


def test_replay_file_with_a_bad_token_exits_2(capsys, tmp_path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("9H 2C\nKD ZZ\n")
    code, out, err = run_cli(capsys, str(path), "--no-burn", "--json")
    assert code == 2 and out == ""
    assert "token 4 'ZZ' (line 2" in err
    code, out, err = run_cli(capsys, str(path), "--decks", "40")
    assert code == 2 and out == "" and "--decks" in err
