"""The game core's tables built at import, checked in a fresh interpreter against the
references: the deck (cards.py), the inventory lanes, the insurance sheet of issue 8
(insurance.py) and the round graph (round.py, from the tableau).

The import happens inside the test (a child interpreter), so an import that raises, or
builds a wrong table, is a failing test here, not only a collection error elsewhere
(the mutation campaign counts a mutant as killed only by a failing test).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import baccarat_ref as ref

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import itertools, json
from shoe_controller.game import cards, inventory, insurance, round as rnd
out = {
    "deck": [[c.code, c.rank, c.suit, c.value, c.index] for c in cards.ALL_CARDS],
    "parsed": {t: cards.parse_card(t).code for t in ("10S", "th", " kd ", "AC")},
    "shift": inventory.SHIFT_BY_CODE,
    "rows": [[r.side, r.stage, r.player, r.banker, r.insures, r.odds]
             for r in insurance.DEFAULT_ROWS],
}
rounds = []
for five in itertools.product(range(10), repeat=5):
    values = (*five, (sum(five) * 7 + five[0]) % 10)
    node, hands, used = rnd.START, {"player": [], "banker": []}, 0
    while not rnd.is_complete(node):
        hand, position = rnd.due(node)
        hands[hand].append(values[used])
        assert position == len(hands[hand])
        node = rnd.deal(node, values[used])
        used += 1
    o = rnd.outcome(node)
    rounds.append([hands["player"], hands["banker"], o.winner, rnd.prompt(node)])
out["rounds"] = rounds
print(json.dumps(out))
"""

RANKS = "A23456789TJQK"
CODE = {0: "TS", **{v: RANKS[v - 1] + "S" for v in range(1, 10)}}


def test_the_tables_built_at_import_match_the_references():
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    deck = [r + s for s in "SHDC" for r in RANKS]
    assert out["deck"] == [[code, RANKS.index(code[0]) + 1, code[1], ref.value(code), i]
                           for i, code in enumerate(deck)]
    assert out["parsed"] == {"10S": "TS", "th": "TH", " kd ": "KD", "AC": "AC"}
    assert out["shift"] == {code: 1 << (16 * i) for i, code in enumerate(deck)}
    assert out["rows"] == [list(row) for row in ref.INSURANCE_SHEET]
    want = []
    for five in itertools.product(range(10), repeat=5):
        values = (*five, (sum(five) * 7 + five[0]) % 10)
        player, banker = ref.deal_round([CODE[v] for v in values])
        want.append([[ref.value(c) for c in player], [ref.value(c) for c in banker],
                     ref.winner(player, banker), "stand"])
    assert out["rounds"] == want
