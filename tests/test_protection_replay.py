"""`replay` shows the protection alerts (orientation suffixes ^ / v on card tokens)."""

from __future__ import annotations

import json
import random

from shoe_controller.cli import main
from shoe_controller.game.cards import ALL_CARDS


def shoe_text(seed: int, orient) -> str:
    cards = [c for c in ALL_CARDS for _ in range(8)]
    random.Random(seed).shuffle(cards)
    tokens = []
    for i, c in enumerate(cards):
        if i == len(cards) - 16:
            tokens.append("CUT")
        tokens.append(c.code + orient(c))
    return "# a recorded shoe\n" + " ".join(tokens) + "\n"


def replay_json(tmp_path, capsys, text, *extra):
    path = tmp_path / "shoe.txt"
    path.write_text(text)
    assert main(["replay", str(path), "--json", *extra]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_replay_shows_an_edge_sorting_alert_with_its_round(tmp_path, capsys):
    text = shoe_text(3, lambda c: "v" if c.rank in (6, 7, 8, 9) else "^")
    events = replay_json(tmp_path, capsys, text)
    edge = [e for e in events if e["type"] == "integrity_alert" and e["kind"] == "edge_sorting"]
    assert len(edge) == 1
    assert edge[0]["evidence"]["p_value"] <= edge[0]["evidence"]["threshold"]
    # raised right after the round it concerns was confirmed
    i = events.index(edge[0])
    before = [e for e in events[:i] if e["type"] == "result_confirmed"]
    assert before[-1]["round"] == edge[0]["round"]


def test_replay_of_a_fair_shoe_has_no_shuffle_or_edge_alert(tmp_path, capsys):
    rng = random.Random(1)
    text = shoe_text(4, lambda c: rng.choice("^v"))
    events = replay_json(tmp_path, capsys, text, "--analysis")
    kinds = {e["kind"] for e in events if e["type"] == "integrity_alert"}
    assert kinds <= {"advantage"}
    analyses = [e for e in events if e["type"] == "shoe_analysis"]
    assert len(analyses) > 50
    assert set(analyses[0]["house_edge"]) >= {"banker", "player", "tie", "player_pair"}


def test_replay_of_new_decks_unshuffled_shows_shuffle_alerts_as_text(tmp_path, capsys):
    cards = [c.code for _ in range(8) for c in ALL_CARDS]
    path = tmp_path / "stacked.txt"
    path.write_text(" ".join(cards[:300]) + " CUT " + " ".join(cards[300:]))
    assert main(["replay", str(path)]) == 0
    text = capsys.readouterr().out
    assert "ALERT shuffle_runs" in text and "ALERT shuffle_order" in text
    assert "analysis:" not in text  # only with --analysis
