"""Write full_shoe_8deck.txt: an 8-deck shoe from a seeded shuffle, the cut card 16
cards before the end. Run once; the output is committed (python make_full_shoe.py)."""

import random
from pathlib import Path

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"]


def main() -> None:
    cards = [r + s for _ in range(8) for s in "SHDC" for r in RANKS]
    random.Random(20261130).shuffle(cards)
    cards.insert(len(cards) - 16, "CUT")
    lines = [
        "# A full 8-deck shoe from random.Random(20261130).shuffle; cut card 16 from the end.",
        "# Every card of the shoe is listed: those after the last round would stay in the shoe",
        "# at a real table; here they show how cards drawn after the end of a shoe are caught.",
    ]
    lines += [" ".join(cards[i : i + 13]) for i in range(0, len(cards), 13)]
    Path(__file__).with_name("full_shoe_8deck.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
