"""Money over many rounds on one table, checked against the independent reference
(tests/support/baccarat_ref.py: DESIGN.md's rule text and the published paytables).

Issue 15's surviving mutants: the settlement memo read or written at the wrong slot (a
round with a pair paid from another round's cached settlement: only visible after many
rounds on one table), insurance settled as void in every round after the first,
``bets_open`` after a button-confirmed or voided round listing the previous round's
bets, the excess-card alert lost on 1-deck and odd-deck shoes, ``[paytable] tei = 9.0``
loading silently.
"""

from __future__ import annotations

import random

import pytest

from shoe_controller.config import ConfigError, load_config_text
from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.events import decode_event, encode_event
from shoe_controller.game.insurance import InsuranceConfig
from shoe_controller.game.rules import Rules
from shoe_controller.game.settlement import Pairs, Settler, pairs_of
from shoe_controller.game.shoe import Shoe, fold, table_for
from tests.support import baccarat_ref as ref

SUITS = "SHDC"
RANKS = "A23456789TJQK"


def deck(decks: int, rng: random.Random) -> list[str]:
    cards = [r + s for r in RANKS for s in SUITS] * decks
    rng.shuffle(cards)
    return cards


def seen(code: str) -> I.CardSeen:
    return I.CardSeen(parse_card(code))


def check_result(result, player: list[str], banker: list[str], *, commission: bool = True
                 ) -> None:
    """One round_result against the reference (cards, totals, winner, every bet)."""
    assert list(result.player) == player and list(result.banker) == banker
    assert (result.player_total, result.banker_total) == (ref.total(player), ref.total(banker))
    assert result.winner == ref.winner(player, banker)
    want = ref.settle(player, banker, commission)
    open_bets = ref.offered(result.round)
    assert result.settlement == {b: want[b] for b in ref.ALL_BETS if b in open_bets}, (
        result.round, player, banker)


def play_auto_shoe(shoe: Shoe, rng: random.Random, *, decks: int = 8,
                   commission: bool = True,
                   between: bool | None = None, on_round=None) -> int:
    """Deal one whole shoe (burn by the first card, automatic rounds and confirmation,
    the cut card mid-round or between rounds) and check every round; return the rounds.

    ``on_round(n, player, banker, events)`` may check more per round.
    """
    policy = shoe.rules.cut_card
    cards = deck(decks, rng)
    events = shoe.apply(I.NewShoe())
    assert [e.type for e in events] == ["shoe_started"]
    indicator = cards.pop(0)
    burn = ref.burn_after_indicator(indicator)
    events = shoe.apply(seen(indicator))
    assert [(e.type, e.burn_count) for e in events] == [("burn_indicator", burn)]
    for _ in range(burn):
        events = [e for c in [cards.pop(0)] for e in shoe.apply(seen(c))]
    assert events[-1].type == "bets_open" and set(events[-1].bets) == ref.offered(1)
    cut_round = rng.randint(62, 70)
    mid = rng.random() < 0.5 if between is None else not between
    last = None
    n = 0
    while True:
        n += 1
        player, banker = ref.deal_round(cards)
        # the deal order: P B P B, then the third cards (Player's first)
        order = [player[0], banker[0], player[1], banker[1]]
        if len(player) == 3:
            order.append(player[2])
        if len(banker) == 3:
            order.append(banker[2])
        del cards[:len(order)]
        inputs: list[I.Input] = [seen(c) for c in order]
        if n == cut_round:
            if mid:
                inputs.insert(rng.randint(1, len(order) - 1), I.CutCardSeen())
                last = n + (1 if policy == "one_more_round" else 0)
            else:
                inputs.insert(0, I.CutCardSeen())
                last = n
        events = [e for inp in inputs for e in shoe.apply(inp)]
        results = [e for e in events if e.type == "round_result"]
        assert len(results) == 1 and results[0].round == n
        check_result(results[0], player, banker, commission=commission)
        if on_round is not None:
            on_round(n, player, banker, events)
        if n == last:
            end = events[-1]
            assert (end.type, end.rounds, end.reason) == ("shoe_ended", n, "cut_card")
            return n
        assert events[-1].type == "bets_open" and events[-1].round == n + 1
        assert set(events[-1].bets) == ref.offered(n + 1)


def test_settlement_over_100_shoes_on_one_table():
    """The memo is per table: 100 shoes (over 6,000 rounds, a few hundred with pairs) on
    one table, every bet of every round against the reference."""
    rng = random.Random(1515)
    shoe = Shoe(Rules())
    rounds = [play_auto_shoe(shoe, rng) for _ in range(100)]
    assert sum(rounds) > 6000 and min(rounds) >= 62


class Restarting(Shoe):
    """A shoe that journals every event and, at the chosen inputs, is rebuilt from its
    journal the way the daemon is after a restart: the events through their JSON form,
    folded onto a fresh table (a new process has no settlement memo yet)."""

    __slots__ = ("inputs", "journal", "restart_at", "restarts")

    def __init__(self, rules: Rules, restart_at: set[int]) -> None:
        super().__init__(rules)
        self.journal: list[bytes] = []
        self.inputs = 0
        self.restart_at = restart_at
        self.restarts = 0

    def apply(self, inp: I.Input) -> list:
        self.inputs += 1
        if self.inputs in self.restart_at:
            before = self.state
            table_for.cache_clear()
            self.state = fold(self.rules, (decode_event(b) for b in self.journal))
            assert self.state == before and self.state.table is not before.table
            self.restarts += 1
        events = super().apply(inp)
        self.journal += [encode_event(e) for e in events]
        return events


def test_a_shoe_resumed_after_a_restart_pays_every_round_as_the_reference():
    """Rebuilt from the journal mid-round and between rounds (about every 30th input),
    each time on a table with no settlement memo, every later round's cards, winner,
    bets open and every bet still agree with the reference."""
    rng = random.Random(4242)
    restart_at = set(range(5, 2000, 29)) | set(range(7, 2000, 31))
    shoe = Restarting(Rules(), restart_at)
    rounds = [play_auto_shoe(shoe, rng) for _ in range(3)]
    assert min(rounds) >= 62 and shoe.restarts > 40
    table_for.cache_clear()


def test_settlement_no_commission_over_many_shoes():
    rng = random.Random(77)
    shoe = Shoe(Rules(commission="no_commission", cut_card="one_more_round"))
    for _ in range(25):
        play_auto_shoe(shoe, rng, commission=False)


@pytest.mark.parametrize("policy", ["last_round", "one_more_round"])
@pytest.mark.parametrize("between", [True, False])
def test_cut_card_policies_end_the_shoe_after_the_right_round(policy, between):
    rng = random.Random(hash((policy, between)) & 0xFFFF)
    shoe = Shoe(Rules(cut_card=policy))
    for _ in range(3):
        play_auto_shoe(shoe, rng, between=between)


# ------------------------------------------------------------------ insurance


def test_insurance_in_every_round_of_a_shoe_auto_reveal():
    """Insurance offers and settlement in rounds after the first (auto reveal), against
    the rule sheet; one round's insurance voided by the supervisor, the next ones not."""
    rng = random.Random(8)
    shoe = Shoe(Rules(insurance=InsuranceConfig(enabled=True)))
    settled: list[int] = []

    def on_round(n, player, banker, events):
        offers = [(e.stage, e.side, e.insures, e.odds) for e in events
                  if e.type == "insurance_offer"]
        assert offers == ref.auto_reveal_offers(player, banker)
        result = next(e for e in events if e.type == "round_result")
        w = ref.winner(player, banker)
        got = [(s.stage, s.side, s.insures, s.odds, s.net) for s in result.insurance]
        assert got == [(*o, ref.insurance_result(o[2], o[3], w, False)) for o in offers]
        if got:
            settled.append(n)

    for _ in range(3):
        play_auto_shoe(shoe, rng, on_round=on_round)
    assert len(settled) > 40 and max(settled) > 40


def _button_round(shoe: Shoe, cards: list[str], *, void_insurance: bool):
    """One round at a reveal-button, confirm-button table: NEW, four cards, reveal
    Player then Banker, the rest of the cards, (void insurance,) confirm."""
    player, banker = ref.deal_round(cards)
    order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
    del cards[:len(order)]
    evs = shoe.apply(I.NewRound())
    for c in order[:4]:
        evs += shoe.apply(seen(c))
    evs += shoe.apply(I.Reveal("player"))
    evs += shoe.apply(I.Reveal("banker"))
    for c in order[4:]:
        evs += shoe.apply(seen(c))
    if void_insurance:
        evs += shoe.apply(I.VoidInsurance("exposed"))
    evs += shoe.apply(I.ConfirmResult())
    return player, banker, evs


def test_insurance_in_every_round_of_a_shoe_reveal_buttons():
    rng = random.Random(9)
    shoe = Shoe(Rules(burn="none", rounds="button", confirm="button",
                      insurance=InsuranceConfig(enabled=True, reveal="button")))
    shoe.apply(I.NewShoe())
    cards = deck(8, rng)
    voids = {3, 17, 41}
    with_offers = 0
    for n in range(1, 66):
        player, banker, evs = _button_round(shoe, cards, void_insurance=n in voids)
        pt, bt = ref.total(player[:2]), ref.total(banker[:2])
        want = [("2/2", *r) for r in ref.insurance_rows("2/2", pt, None)]
        if len(player) + len(banker) > 4:  # a card still to come once both are shown
            want += [("2/2", *r) for r in ref.insurance_rows("2/2", pt, bt)]
        offers = [(e.stage, e.side, e.insures, e.odds) for e in evs
                  if e.type == "insurance_offer"]
        assert offers == want, (n, player, banker)
        (result,) = [e for e in evs if e.type == "round_result"]
        assert result.round == n
        check_result(result, player, banker)
        w = ref.winner(player, banker)
        got = [(s.stage, s.side, s.insures, s.odds, s.outcome, s.net) for s in result.insurance]
        expect = []
        for o in want:
            net = ref.insurance_result(o[2], o[3], w, n in voids)
            outcome = "void" if n in voids else "won" if o[2] == w else "lost"
            expect.append((*o, outcome, net))
        assert got == expect, n
        with_offers += bool(want)
        assert evs[-1].type == "bets_open" and set(evs[-1].bets) == ref.offered(n + 1)
    assert with_offers > 20


# ----------------------------------------------------------------- bets open


def test_bets_open_after_button_confirmed_and_voided_rounds():
    """Every bets_open names the bets of the round it opens (round n+1), across the 40/50/60
    closing rounds, after confirmed and after voided rounds (before and after cards)."""
    rng = random.Random(60)
    shoe = Shoe(Rules(burn="none", rounds="button", confirm="button"))
    evs = shoe.apply(I.NewShoe())
    assert evs[-1].round == 1 and set(evs[-1].bets) == ref.offered(1)
    cards = deck(8, rng)
    voided = {39, 40, 41, 50, 51, 60, 61}
    results = {}
    for n in range(1, 70):
        player, banker = ref.deal_round(cards)
        order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
        del cards[:len(order)]
        evs = shoe.apply(I.NewRound())
        assert [(e.type, e.round) for e in evs] == [("round_started", n)]
        if n in voided:
            for c in order[: n % 3 + 1]:
                evs += shoe.apply(seen(c))
            evs += shoe.apply(I.Void("test"))
            assert [e.type for e in evs][-2:] == ["round_voided", "bets_open"]
        else:
            for c in order:
                evs += shoe.apply(seen(c))
            evs += shoe.apply(I.ConfirmResult())
            assert [e.type for e in evs][-3:] == ["round_result", "result_confirmed",
                                                  "bets_open"]
            results[n] = evs[-3]
            check_result(evs[-3], player, banker)
        assert evs[-1].round == n + 1
        assert set(evs[-1].bets) == ref.offered(n + 1), n
    assert not voided & set(results)


def test_bets_open_after_a_misdeal_void():
    shoe = Shoe(Rules(burn="none", rounds="button", confirm="button", extra_card="void"))
    shoe.apply(I.NewShoe())
    rng = random.Random(5)
    cards = deck(8, rng)
    for n in range(1, 53):
        player, banker = ref.deal_round(cards)
        order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
        del cards[:len(order)]
        shoe.apply(I.NewRound())
        for c in order:
            shoe.apply(seen(c))
        if n in (40, 50):
            evs = shoe.apply(seen(cards.pop(0)))  # an extra card: the round is voided
            assert [e.type for e in evs] == ["misdeal", "round_voided", "bets_open"]
        else:
            evs = shoe.apply(I.ConfirmResult())
        assert evs[-1].round == n + 1 and set(evs[-1].bets) == ref.offered(n + 1), n


# ------------------------------------------------------------------ excess card


@pytest.mark.parametrize("decks", [1, 2, 3, 5, 8])
def test_excess_card_alert_for_any_deck_count(decks):
    """A card seen more often than the decks hold raises excess_card, for 1-deck and
    odd-deck shoes too; not before."""
    shoe = Shoe(Rules(burn="none", decks=decks))
    shoe.apply(I.NewShoe())
    alerts = []
    for _ in range(decks + 2):
        evs = shoe.apply(seen("QS"))
        alerts.append([e for e in evs if e.type == "integrity_alert"])
    assert all(a == [] for a in alerts[:decks])
    for k, got in enumerate(alerts[decks:]):
        assert [(a.kind, a.evidence) for a in got] == [
            ("excess_card", {"card": "QS", "seen": decks + 1 + k, "decks": decks})]


@pytest.mark.parametrize("decks", [1, 3])
def test_excess_card_alert_between_rounds_and_while_paused(decks):
    shoe = Shoe(Rules(burn="none", decks=decks, rounds="button"))
    shoe.apply(I.NewShoe())
    for _ in range(decks):
        shoe.apply(seen("7H"))  # misdeals (no round open): still read and counted
    evs = shoe.apply(seen("7H"))
    assert [e.type for e in evs] == ["integrity_alert", "misdeal"]
    assert evs[0].evidence == {"card": "7H", "seen": decks + 1, "decks": decks}
    shoe.apply(I.Pause())
    evs = shoe.apply(seen("7H"))
    assert [e.type for e in evs] == ["integrity_alert", "misdeal"]
    assert evs[0].evidence["seen"] == decks + 2


# ----------------------------------------------------------------- config refusals


@pytest.mark.parametrize(("text", "where"), [
    ("[paytable]\ntei = 9.0", r"\[paytable\] tei: unknown key"),
    ("[paytable]\ntie = 9.0\nplayer_pairs = 12.0", r"\[paytable\] player_pairs: unknown key"),
    ("[bet_availability]\npair = 30", r"\[bet_availability\] pair: unknown key"),
    ("[rules]\ncomission = 'no_commission'", r"\[rules\] comission: unknown key"),
    ("[insurance]\nenable = true", r"\[insurance\] enable: unknown key"),
])
def test_unknown_paytable_and_rules_fields_are_refused(text, where):
    with pytest.raises(ConfigError, match=where):
        load_config_text(text, "table.toml")


def test_known_paytable_field_loads_and_pays():
    cfg = load_config_text("[rules]\nburn = 'none'\n[paytable]\ntie = 9.0")
    shoe = Shoe(cfg.rules)
    shoe.apply(I.NewShoe())
    # P 2C 5S = 7, B QD 7D = 7: both stand, a tie
    evs = [e for c in ["2C", "QD", "5S", "7D"] for e in shoe.apply(seen(c))]
    (result,) = [e for e in evs if e.type == "round_result"]
    assert result.winner == "tie" and result.settlement["tie"] == 9.0


def test_pairs_of_against_the_reference_pair_rules():
    """Pair facts for every two-card combination of ranks and suits that matters."""
    rng = random.Random(2)
    codes = [r + s for r in RANKS for s in SUITS]
    for _ in range(3000):
        p = rng.sample(codes, 2) if rng.random() < 0.7 else [rng.choice(codes)] * 2
        b = [rng.choice(codes), rng.choice(codes), *rng.sample(codes, rng.randint(0, 1))]
        got = pairs_of(p, b)
        want = ref.settle(p, b[:2])
        assert got == Pairs(want["player_pair"] > 0, want["banker_pair"] > 0,
                            want["perfect_pair"] > 0), (p, b)
        assert got.code == got.player_pair + 2 * got.banker_pair + 4 * got.perfect


def _values(cards: list[str]) -> list[int]:
    return [ref.value(c) for c in cards]


def test_settler_direct_against_the_reference():
    """Settler.settle with a Pairs or its code, on a fresh memo and a warm one, for rounds
    on either side of every closing round; an incomplete round is refused by name."""
    from shoe_controller.game import round as rnd

    rng = random.Random(12)
    warm = Settler(Rules())
    for i in range(2000):
        cards = deck(1, rng)[:6]
        if i % 7 == 0:
            cards[1] = cards[0][0] + "SHDC"[rng.randrange(4)]  # make pairs common
        player, banker = ref.deal_round(cards)
        node = rnd.START
        for c in [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]:
            node = rnd.deal(node, ref.value(c))
        facts = Pairs(player[0][0] == player[1][0], banker[0][0] == banker[1][0],
                      player[0] == player[1] or banker[0] == banker[1])
        n = rng.choice([0, 1, 39, 40, 41, 50, 51, 60, 61, 80])
        want = ref.settle(player, banker)
        expected = {b: want[b] for b in ref.ALL_BETS if b in ref.offered(max(n, 1))}
        fresh = Settler(Rules())
        assert fresh.settle(node, facts, n) == expected, (player, banker, n)
        assert warm.settle(node, facts.code, n) == expected
        assert warm.offered(n) == tuple(b for b in ref.ALL_BETS if b in ref.offered(max(n, 1)))
    with pytest.raises(ValueError, match=r"^cannot settle an incomplete round$"):
        Settler(Rules()).settle(rnd.START, 0, 1)


def test_burn_count_against_the_burn_rules():
    from shoe_controller.game.rules import burn_count

    for code in [r + "S" for r in RANKS]:
        assert burn_count(Rules(), ref.value(code)) == ref.burn_after_indicator(code)
    assert burn_count(Rules(burn="decks", decks=6)) == 6
    assert burn_count(Rules(burn="fixed", burn_cards=3)) == 3
    assert burn_count(Rules(burn="none")) == 0
    with pytest.raises(ValueError, match=r"^the first_card burn rule needs the indicator "
                                         r"card's value$"):
        burn_count(Rules())
