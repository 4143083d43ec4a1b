"""The minimum-deadwood solver (RULES.md C5): the examples of §2-§4, meld validity, and
property tests against a brute force that simply tries every meld and every split."""

from __future__ import annotations

import doctest
import functools
import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.melds
from engine.cards import JOKER, format_card, parse_card, parse_cards, standard_deck
from engine.melds import (
    MeldRules,
    as_meld,
    best_arrangement,
    best_discard,
    can_go_out,
    discard_scores,
    go_out_discards,
    is_fully_melded,
    may_go_out,
    min_deadwood,
    rummy_values,
)


def hand(text: str) -> list[int]:
    return parse_cards(text)


def tt(round_no: int, aces: str = "low", jokers_wild: bool = True) -> MeldRules:
    """Three Thirteen round ``round_no`` (§2 R2, R4): wild rank round+2; unmatched ace 15 if high_or_low."""
    return MeldRules(aces=aces, wild_ranks=frozenset({round_no + 2}), jokers_wild=jokers_wild,
                     values=rummy_values(ace=15 if aces == "high_or_low" else 1))


def tz(round_no: int) -> MeldRules:
    """Threezies round ``round_no`` (§3): wild rank round+2, aces high or low, an ace scores 1."""
    return MeldRules(aces="high_or_low", wild_ranks=frozenset({round_no + 2}))


CONTRACT = MeldRules(min_set=3, min_run=4, aces="high_or_low", wild_ranks=frozenset({2}),
                     wild_limit="at_least_one_natural", values=rummy_values(ace=15, joker=25, two=20, low=5))


def score(text: str, rules: MeldRules) -> int:
    return min_deadwood(hand(text), rules)


# --------------------------------------------------------------------------- Three Thirteen (§2)


def test_TT1():
    assert score("3C 7D 7S", tt(1)) == 0


def test_TT2():
    assert score("KS QH 5D", tt(1)) == 25


def test_TT3():
    assert score("7H 8H 9H 9S 9D 9C", tt(4)) == 0
    assert score("7H 8H 9S 9D 9C", tt(4)) == 15  # all four 9s in the set leaves 7H 8H


def test_TT4():
    h = "5H 6H 7H 8H 5S 5D 8S 8D KC"
    assert score(h, tt(7)) == 20
    assert sorted(best_arrangement(hand(h), tt(7)).deadwood) == sorted(hand("5S 5D KC"))


def test_TT5():
    assert score("JS KS TS QH QD 6C", tt(4)) == 20
    assert score("JS KS TS QH QD", tt(4)) == 50  # without the wild: no meld


def test_TT6():
    assert score("3S 4S 5S 6S 7H 6D 6C", tt(5)) == 0


def test_TT7():
    assert score("KS 5H 5D 2C 2D", tt(3)) == 4


def test_TT8():
    assert score("7H 7H 7S 5C 5D", tt(3)) == 0  # two decks: identical cards in one set


@pytest.mark.parametrize(("text", "low", "high_or_low"), [
    ("QS KS AS", 21, 0),
    ("AS KH 2D", 13, 27),
    ("KH AH 3C", 14, 0),  # 3C (wild) as QH
])
def test_TT9(text, low, high_or_low):
    assert score(text, tt(1)) == low
    assert score(text, tt(1, aces="high_or_low")) == high_or_low


def test_TT10():
    choice = best_discard(hand("4C 9S 9H 9D KS"), tt(2))
    assert (format_card(choice.card), choice.score, choice.can_go_out) == ("KS", 0, True)


def test_TT11():
    h = hand("KS KH 2C 3C 5C 9D 9H 9S QD JD TD 4H 4S")
    assert min_deadwood(h, tt(11)) == 0
    assert is_fully_melded(h, tt(11))


# --------------------------------------------------------------------------- Threezies (§3)


def test_TZ1():
    assert score("7S 7H 7D 7C TS TH 2D 3D 4D 5D", tz(8)) == 0


def test_TZ2():
    assert score("JS JH JD 6C 4S 8H", tz(4)) == 12


def test_TZ3():
    assert score("9C 9D 9H 2S 8D KC", tz(4)) == 20


@pytest.mark.parametrize(("text", "expected"), [
    ("QH KH AH", 0), ("KH AH 2H", 13), ("KH AH 3C", 0), ("KS 2S 3C", 15),
])
def test_TZ4(text, expected):
    assert score(text, tz(1)) == expected


def test_TZ5():
    assert score("AH KH 5C QS QD", tz(3)) == 11


def test_TZ6():
    assert score("JS KS TS QH QD 6C", tz(4)) == 20


# --------------------------------------------------------------------------- contract rummy (§4)


def test_CR2_values():
    assert score("3S 9D TC KH AS 2C JK", MeldRules(values=CONTRACT.values, jokers_wild=False)) == 90
    assert sum(CONTRACT.values[c] for c in hand("3S 9D TC KH AS 2C JK")) == 90
    assert score("4D 4C 8S", CONTRACT) == 15


def test_CR4_runs():
    assert str(as_meld(hand("5H 6H 2C 8H"), CONTRACT)) == "run 5H 6H 2C=7H 8H"
    m = as_meld(hand("QS KS AS 2S"), CONTRACT)
    assert m is not None and m.kind == "run" and m.stands_for == tuple(hand("JS QS KS AS"))
    assert as_meld(hand("KS AS 2S 3S"), MeldRules(min_run=4, aces="high_or_low")) is None
    m = as_meld(hand("AS 2S 3S 4S"), CONTRACT)
    assert m is not None and m.stands_for == m.cards == tuple(hand("AS 2S 3S 4S"))


def test_natural_twos_count_as_naturals():
    assert as_meld(hand("2H 2D 2S"), CONTRACT) is not None  # a set of 2s is natural
    assert as_meld(hand("2H JK JK JK"), CONTRACT) is not None  # 2H at its own place in A-2-3-4H
    assert as_meld(hand("2H 2D JK JK"), CONTRACT) is not None
    assert as_meld(hand("JK JK JK"), CONTRACT) is None  # no natural
    assert as_meld(hand("JK JK JK"), tt(1)) is not None  # an all-wild meld is legal in TT
    assert score("2H JK JK JK", CONTRACT) == 0
    assert score("JK JK JK", CONTRACT) == 75


def test_CR7_hand_seven():
    h = hand("3D 4D 5D 6D 7D 9C TC JC QC KS KH KD")
    assert is_fully_melded(h, CONTRACT)
    assert best_discard(h + hand("8S"), CONTRACT).card == parse_card("8S")


# --------------------------------------------------------------------------- meld validity


def test_runs_with_wild_gaps():
    rules = tt(1)
    m = as_meld(hand("5H 3C 7H"), rules)
    assert m is not None and m.kind == "run" and m.stands_for == tuple(hand("5H 6H 7H"))
    assert as_meld(hand("5H 3C 3D 8H"), rules) is not None
    assert as_meld(hand("5H 3C 9H"), rules) is None  # two gaps, one wild
    assert as_meld(hand("5H 3C 3D"), rules) is not None  # one natural and two wilds


def test_exact_assignments():
    rules = tt(1)
    assert as_meld(hand("5H 3C 7H"), rules, hand("5H 6H 7H")) is not None
    assert as_meld(hand("5H 3C 7H"), rules, hand("5H 5H 7H")) is None
    assert as_meld(hand("5H 6H 7H"), rules, hand("5H 6H 8H")) is None  # a natural stands for itself
    assert as_meld(hand("QS KS AS"), tt(1), hand("QS KS AS")) is None  # aces low only
    assert as_meld(hand("QS KS AS"), tt(1, "high_or_low"), hand("QS KS AS")) is not None
    assert as_meld(hand("7C 7D 3H"), rules, hand("7C 7D 7H")) is not None
    m = as_meld(hand("3C 5H 4H"), rules, hand("3H 5H 4H"))
    assert m is not None and m.cards == tuple(hand("3C 4H 5H"))


def test_minimum_sizes():
    assert as_meld(hand("7H 8H"), MeldRules()) is None
    assert as_meld(hand("7H 7S"), MeldRules()) is None
    assert as_meld(hand("7H 8H 9H"), MeldRules(min_run=4)) is None
    assert as_meld(hand("7H 8H 9H TH"), MeldRules(min_run=4)) is not None
    assert as_meld(hand("7H 7S 7D"), MeldRules(min_set=4)) is None
    assert as_meld(hand("7H 8H 9H TH JH QH KH AH 2H 3H 4H 5H 6H"), MeldRules()) is not None
    two_decks = hand("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH")
    assert as_meld(two_decks, MeldRules(aces="high_or_low")) is None  # an ace at both ends


def test_wrapping_and_ace_ends():
    assert as_meld(hand("KS AS 2S"), MeldRules(aces="high_or_low")) is None
    assert as_meld(hand("QS KS AS"), MeldRules()) is None
    assert as_meld(hand("AS 2S 3S"), MeldRules()) is not None


def test_wild_limits():
    fewer = MeldRules(wild_ranks=frozenset({2}), wild_limit="fewer_than_naturals")
    not_more = MeldRules(wild_ranks=frozenset({2}), wild_limit="not_more_than_naturals")
    assert as_meld(hand("7H 7S 2C"), fewer) is not None
    assert as_meld(hand("7H 2S 2C"), fewer) is None
    assert as_meld(hand("7H 8H 2C 2D"), not_more) is not None
    assert as_meld(hand("7H 2H 2C 2D"), not_more) is None


def test_non_wild_joker_fits_nothing():
    rules = MeldRules(jokers_wild=False)
    assert as_meld(hand("7H 8H JK"), rules) is None
    assert score("7H 8H 9H JK", rules) == 20


def test_a_full_run_splits_to_take_a_spare_wild():
    cards = hand("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH JK")
    assert min_deadwood(cards, MeldRules()) == 0  # A-J and JK(=JH) Q K
    check_arrangement(cards, MeldRules())
    # runs of 8+ cannot split 14 cards: the joker takes the ace's place and the ace stays out
    assert min_deadwood(cards, MeldRules(min_run=8)) == 1 == brute_min_deadwood(cards, MeldRules(min_run=8))
    check_arrangement(cards, MeldRules(min_run=8))


def test_empty_hand_and_bad_cards():
    assert min_deadwood([], MeldRules()) == 0
    assert is_fully_melded([], MeldRules())
    with pytest.raises(ValueError):
        min_deadwood([60], MeldRules())
    with pytest.raises(ValueError):
        min_deadwood([-1], MeldRules())


def test_discard_scores_and_ties():
    rules = MeldRules()
    assert discard_scores(hand("7H 8H 9H KS"), rules) == {
        parse_card("7H"): 27, parse_card("8H"): 26, parse_card("9H"): 25, parse_card("KS"): 0}
    # QS or KS: both leave 10; the tie goes to the higher card code, KS
    assert best_discard(hand("7H 8H 9H QS KS"), rules).card == parse_card("KS")
    # an unmatched wild is discarded for its value, but a natural of the same value goes first
    assert best_discard(hand("KC 2D 5S"), MeldRules(wild_ranks=frozenset({13}))).card == parse_card("KC")
    assert best_discard(hand("KC QD 5S"), MeldRules(wild_ranks=frozenset({13}))).card == parse_card("QD")
    # a fully melded hand of n+1 cards can still go out by shortening a meld
    choice = best_discard(hand("7H 8H 9H TH"), rules)
    assert choice.can_go_out and choice.card in (parse_card("7H"), parse_card("TH"))


def test_doctests():
    failures, _ = doctest.testmod(engine.melds)
    assert failures == 0


# --------------------------------------------------------------------------- the brute force


def brute_melds(cards: tuple[int, ...], rules: MeldRules) -> set[tuple[int, ...]]:
    """Every sub-multiset of ``cards`` that is one legal meld, found from its stand-in cards.

    A set: a rank and any choice of cards that can stand for it. A run: a suit, a window of
    positions and, at each position, the natural card or any wild.
    """
    have = Counter(cards)
    wilds = sorted(c for c in have if rules.is_wild(c))
    out = set()

    def limit_ok(naturals: int, n_wild: int) -> bool:
        return {
            "none": True,
            "at_least_one_natural": naturals >= 1,
            "not_more_than_naturals": n_wild <= naturals,
            "fewer_than_naturals": n_wild < naturals,
        }[rules.wild_limit]

    for rank in range(13):
        pool = [c for c in cards if c != JOKER and c % 13 == rank] + [c for c in cards if rules.is_wild(c)]
        pool = sorted(set(pool))
        # how many of each card: any amount up to the copies held (a wild-rank card is in the pool once)
        for counts in itertools.product(*[range(have[c] + 1) for c in pool]):
            meld = [c for c, k in zip(pool, counts, strict=True) for _ in range(k)]
            if len(meld) < rules.min_set:
                continue
            naturals = sum(1 for c in meld if c != JOKER and c % 13 == rank)
            if limit_ok(naturals, len(meld) - naturals):
                out.add(tuple(sorted(meld)))
    top = 14 if rules.aces == "high_or_low" else 13
    for suit in range(4):
        for start in range(1, top + 1):
            for length in range(rules.min_run, 14):
                end = start + length - 1
                if end > top:
                    break
                wanted = [suit * 13 + (p if p <= 13 else 1) - 1 for p in range(start, end + 1)]
                for pick in fill(wanted, have, wilds):
                    naturals = sum(1 for want, c in zip(wanted, pick, strict=True) if c == want)
                    if limit_ok(naturals, length - naturals):
                        out.add(tuple(sorted(pick)))
    return out


def fill(wanted: list[int], have: Counter[int], wilds: list[int]):
    """Every way to put, at each place, the wanted card itself or a wild, using cards held."""
    if not wanted:
        yield ()
        return
    for c in {wanted[0], *wilds}:
        if have[c]:
            have[c] -= 1
            for rest in fill(wanted[1:], have, wilds):
                yield (c, *rest)
            have[c] += 1


def brute_min_deadwood(cards: list[int], rules: MeldRules) -> int:
    """Try every split: the first card is deadwood, or in one of the melds that hold it."""
    melds = brute_melds(tuple(sorted(cards)), rules)
    holding: dict[int, list[Counter[int]]] = {}
    for meld in melds:
        for c in set(meld):
            holding.setdefault(c, []).append(Counter(meld))

    @functools.cache
    def best(rest: tuple[int, ...]) -> int:
        if not rest:
            return 0
        first = rest[0]
        out = rules.values[first] + best(rest[1:])
        have = Counter(rest)
        for meld in holding.get(first, []):
            if not meld - have:
                out = min(out, best(tuple(sorted((have - meld).elements()))))
        return out

    return best(tuple(sorted(cards)))


def check_arrangement(cards: list[int], rules: MeldRules) -> None:
    arrangement = best_arrangement(cards, rules)
    used: Counter[int] = Counter(arrangement.deadwood)
    for meld in arrangement.melds:
        assert as_meld(meld.cards, rules, meld.stands_for) == meld, meld
        used.update(meld.cards)
    assert used == Counter(cards)
    assert arrangement.score == sum(rules.values[c] for c in arrangement.deadwood)
    assert arrangement.score == min_deadwood(cards, rules)
    assert is_fully_melded(cards, rules) == (not arrangement.deadwood)


def deals(deck: list[int], max_size: int, min_size: int = 0):
    return st.lists(st.sampled_from(range(len(deck))), min_size=min_size, max_size=max_size, unique=True).map(
        lambda idx: [deck[i] for i in idx])


ONE_DECK = standard_deck()
TWO_DECKS = standard_deck(2)
WITH_JOKERS = standard_deck(1, jokers=2)
CONTRACT_DECK = standard_deck(2, jokers=4)
RANKS = st.integers(min_value=1, max_value=13)


@settings(max_examples=700)
@given(deals(ONE_DECK, 14))
def test_property_one_deck_no_wilds(cards):
    rules = MeldRules()
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)


@settings(max_examples=700)
@given(deals(ONE_DECK, 14), RANKS)
def test_property_one_wild_rank(cards, wild):
    rules = MeldRules(wild_ranks=frozenset({wild}))
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)


@settings(max_examples=400)
@given(deals(WITH_JOKERS, 12), RANKS)
def test_property_jokers(cards, wild):
    rules = MeldRules(wild_ranks=frozenset({wild}))
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)


@settings(max_examples=400)
@given(deals(TWO_DECKS, 12), RANKS)
def test_property_two_decks(cards, wild):
    rules = MeldRules(wild_ranks=frozenset({wild}))
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)


@settings(max_examples=300)
@given(deals(standard_deck(2, jokers=2), 11), RANKS, st.booleans())
def test_property_two_decks_with_jokers(cards, wild, jokers_wild):
    """Identical cards and jokers, wild or dead: the general search's direct entry (Three Thirteen with 3+
    players) against the brute force."""
    rules = MeldRules(wild_ranks=frozenset({wild}), jokers_wild=jokers_wild)
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)


@settings(max_examples=200)
@given(deals(standard_deck(2, jokers=2), 11), st.sampled_from([None, 1, 2, 12, 13]), st.booleans())
def test_property_two_decks_aces_high_or_low(cards, wild, jokers_wild):
    """Identical cards with aces high or low (Threezies' option on a 3-player Three Thirteen table): the
    least deadwood against the brute force, and a legal best arrangement (the plan rebuilt part by part)."""
    rules = MeldRules(aces="high_or_low", wild_ranks=frozenset() if wild is None else frozenset({wild}),
                      jokers_wild=jokers_wild, values=rummy_values(ace=15))
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)
    check_arrangement(cards, rules)


@settings(max_examples=500)
@given(deals(ONE_DECK, 14), st.sampled_from([None, 1, 2, 3, 12, 13]))
def test_property_aces_high_or_low(cards, wild):
    rules = MeldRules(aces="high_or_low", wild_ranks=frozenset() if wild is None else frozenset({wild}),
                      values=rummy_values(ace=15))
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)


@settings(max_examples=400)
@given(deals(CONTRACT_DECK, 12))
def test_property_contract_rummy(cards):
    assert min_deadwood(cards, CONTRACT) == brute_min_deadwood(cards, CONTRACT)


@settings(max_examples=200)
@given(deals(CONTRACT_DECK, 10), st.sampled_from(["not_more_than_naturals", "fewer_than_naturals"]))
def test_property_wild_limits(cards, limit):
    rules = MeldRules(min_run=4, aces="high_or_low", wild_ranks=frozenset({2}), wild_limit=limit,
                      values=CONTRACT.values)
    assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)


@settings(max_examples=300)
@given(deals(WITH_JOKERS, 14), st.sampled_from([
    MeldRules(wild_ranks=frozenset({5})),
    MeldRules(aces="high_or_low", wild_ranks=frozenset({1}), values=rummy_values(ace=15)),
    CONTRACT,
    MeldRules(min_run=4, wild_ranks=frozenset({2}), wild_limit="fewer_than_naturals"),
]))
def test_property_best_arrangement_is_legal_and_optimal(cards, rules):
    check_arrangement(cards, rules)


DISCARD_CASES = st.sampled_from([
    (ONE_DECK, MeldRules()),
    (ONE_DECK, MeldRules(wild_ranks=frozenset({10}))),
    (WITH_JOKERS, MeldRules(aces="high_or_low", wild_ranks=frozenset({13}), values=rummy_values(ace=15))),
    (WITH_JOKERS, MeldRules(wild_ranks=frozenset({4}), jokers_wild=False)),
    (TWO_DECKS, MeldRules(wild_ranks=frozenset({7}))),
    (standard_deck(2, jokers=2),
     MeldRules(aces="high_or_low", wild_ranks=frozenset({13}), values=rummy_values(ace=15))),
    (CONTRACT_DECK, CONTRACT),
])


@settings(max_examples=600)
@given(DISCARD_CASES.flatmap(lambda case: st.tuples(st.just(case[1]), deals(case[0], 11, min_size=1))))
def test_property_best_discard(case):
    rules, cards = case
    choice = best_discard(cards, rules)
    scores = discard_scores(cards, rules)
    for card, value in scores.items():
        rest = list(cards)
        rest.remove(card)
        assert value == min_deadwood(rest, rules)
    # the least deadwood; ties: the dearer card, then a natural, then the higher code
    expected = min(scores, key=lambda c: (scores[c], -rules.values[c], rules.is_wild(c), -c))
    assert (choice.card, choice.score) == (expected, scores[expected])
    rest = list(cards)
    rest.remove(choice.card)
    assert choice.can_go_out == is_fully_melded(rest, rules)


@settings(max_examples=800)
@given(deals(TWO_DECKS, 14, min_size=2), st.sampled_from([None, 1, 3, 7, 13]), st.sampled_from(["low", "high_or_low"]),
       st.booleans())
def test_property_may_go_out_never_rules_out_a_hand_that_can(cards, wild, aces, jokers):
    """may_go_out is a necessary test: False only where best_discard finds no way out."""
    if jokers:
        cards = [*cards[:-1], 52]
    rules = MeldRules(aces=aces, wild_ranks=frozenset() if wild is None else frozenset({wild}))
    if not may_go_out(cards, rules):
        assert not best_discard(cards, rules).can_go_out


def test_may_go_out_rules_out_two_lone_cards():
    assert not may_go_out(hand("7H 8H 9H KS 2C"), MeldRules())
    assert not may_go_out(hand("7H 8H 9H KS 2C"), MeldRules(wild_ranks=frozenset({5})))  # no wild held
    assert not may_go_out(hand("7H 8H 9H KS 2C 5D"), MeldRules(wild_ranks=frozenset({5})))  # one wild pairs one
    assert may_go_out(hand("7H 8H 9H KS 2C 5D 5S"), MeldRules(wild_ranks=frozenset({5})))
    assert may_go_out(hand("QS KS AS 4D"), MeldRules(aces="high_or_low"))
    assert not may_go_out(hand("QS KS AS 4D 9C"), MeldRules())


# --------------------------------------------------------------------------- going out


def going_out_cards(cards: list[int], rules: MeldRules) -> list[int]:
    """The distinct discards that leave the rest fully melded, by the full solver."""
    out = []
    for card in sorted(set(cards)):
        rest = list(cards)
        rest.remove(card)
        if is_fully_melded(rest, rules):
            out.append(card)
    return out


@st.composite
def meldy_hands(draw, max_melds: int = 4):
    """One-deck hands made of a few sets and runs (some cards missing), plus stray cards:
    hands near going out, which random deals seldom are."""
    cards: set[int] = set()
    for _ in range(draw(st.integers(1, max_melds))):
        if draw(st.booleans()):
            rank = draw(st.integers(0, 12))
            suits = draw(st.lists(st.integers(0, 3), min_size=2, max_size=4, unique=True))
            cards.update(13 * s + rank for s in suits)
        else:
            suit, start, length = draw(st.integers(0, 3)), draw(st.integers(0, 12)), draw(st.integers(2, 6))
            cards.update(13 * suit + p % 13 for p in range(start, min(start + length, 14))
                         if draw(st.integers(0, 6)) > 0)
    cards.update(draw(st.lists(st.integers(0, 51), max_size=3)))
    return sorted(cards)


GO_OUT_RULES = st.builds(
    lambda wild, aces, jokers_wild: MeldRules(aces=aces, wild_ranks=frozenset() if wild is None else frozenset({wild}),
                                              jokers_wild=jokers_wild),
    st.sampled_from([None, *range(1, 14)]), st.sampled_from(["low", "high_or_low"]), st.booleans())


def test_going_out_examples():
    assert can_go_out(hand("4C 9S 9H 9D KS"), tt(2))  # TT10
    assert go_out_discards(hand("4C 9S 9H 9D KS"), tt(2)) == hand("KS")
    assert go_out_discards(hand("7H 8H 9H TH"), MeldRules()) == hand("7H TH")
    assert go_out_discards(hand("7H 7S 7D 7C"), MeldRules()) == hand("7C 7D 7H 7S")
    assert not can_go_out(hand("7H 7S 7D"), MeldRules())  # two cards left are no set
    assert go_out_discards(hand("QS KS AS 4D"), MeldRules(aces="high_or_low")) == hand("4D")
    assert not can_go_out(hand("QS KS AS 4D"), MeldRules())  # ace low only
    assert go_out_discards(hand("5H 7H 9S 3C"), tt(1)) == hand("9S")  # 3C fills 6H: 5H 3C 7H
    assert go_out_discards(hand("5H 7H 5S 5D 3C"), tt(1)) == hand("7H")  # not 5D: 5S would be left
    assert go_out_discards(hand("KS KH 2C 3C 5C 9D 9H 9S QD JD TD 4H 4S 7C"), tt(11)) == hand("7C")  # TT11
    assert go_out_discards(hand("7H 7H 7S 5C 5D 2D"), tt(3)) == hand("2D")  # two decks: the solver answers


@settings(max_examples=500)
@given(st.sampled_from([ONE_DECK, WITH_JOKERS, TWO_DECKS]).flatmap(lambda deck: deals(deck, 15, min_size=1)),
       GO_OUT_RULES)
def test_property_go_out_discards_match_best_discard(cards, rules):
    """can_go_out is best_discard's can_go_out; go_out_discards lists every discard that goes out."""
    expected = going_out_cards(cards, rules)
    assert go_out_discards(cards, rules) == expected
    assert can_go_out(cards, rules) == bool(expected) == best_discard(cards, rules).can_go_out


@settings(max_examples=800)
@given(meldy_hands().filter(bool), GO_OUT_RULES)
def test_property_go_out_discards_near_melded_hands(cards, rules):
    expected = going_out_cards(cards, rules)
    assert go_out_discards(cards, rules) == expected
    assert can_go_out(cards, rules) == bool(expected) == best_discard(cards, rules).can_go_out


@settings(max_examples=200)
@given(meldy_hands(max_melds=3).filter(lambda cards: 0 < len(cards) <= 9), GO_OUT_RULES)
def test_property_go_out_discards_brute_force(cards, rules):
    """Against the brute force: every card costs something, so 0 deadwood is fully melded."""
    expected = [c for c in sorted(set(cards)) if brute_min_deadwood([x for x in cards if x != c], rules) == 0]
    assert go_out_discards(cards, rules) == expected


@settings(max_examples=300)
@given(meldy_hands().filter(bool), st.sampled_from([None, 1, 7, 13]), st.sampled_from(["low", "high_or_low"]))
def test_property_go_out_discards_with_sets_of_two(cards, wild, aces):
    """min_set 2: a pair is a set without any wild (the fast path's bound must know it)."""
    rules = MeldRules(min_set=2, min_run=2, aces=aces, wild_ranks=frozenset() if wild is None else frozenset({wild}))
    assert go_out_discards(cards, rules) == going_out_cards(cards, rules)


# --------------------------------------------------------------------------- the general search's memo

TWO_DECKS_JOKERS = standard_deck(2, jokers=2)
MEMO_RULES = st.sampled_from([
    MeldRules(wild_ranks=frozenset({5})),
    MeldRules(aces="high_or_low", wild_ranks=frozenset({13}), values=rummy_values(ace=15)),
    MeldRules(wild_ranks=frozenset({9}), jokers_wild=False),
    CONTRACT,
])


@settings(max_examples=300)
@given(deals(TWO_DECKS_JOKERS, 14), deals(TWO_DECKS_JOKERS, 14, min_size=1), MEMO_RULES)
def test_property_the_search_memo_never_changes_an_answer(first, cards, rules):
    """Hands with two copies of a card take the general search, whose memo outlives a call: what a hand
    gets does not depend on what was solved before it, and its arrangement is legal and optimal."""
    solver = engine.melds.solver.solver_for(rules)
    solver.memo.clear()
    fresh = (min_deadwood(cards, rules), best_arrangement(cards, rules), best_discard(cards, rules))
    solver.memo.clear()
    min_deadwood(first, rules)
    if first:
        best_discard(first, rules)
    assert (min_deadwood(cards, rules), best_arrangement(cards, rules), best_discard(cards, rules)) == fresh
    check_arrangement(cards, rules)


@settings(max_examples=300)
@given(deals(standard_deck(2), 13), st.sampled_from([(3, 3, "low"), (3, 4, "high_or_low"), (2, 3, "low"),
                                                     (4, 3, "high_or_low")]), st.integers(0, 3))
def test_property_best_is_the_best_of_the_choices(cards, shape, wilds):
    """The general search's ``_best`` (its choices enumerated inline) against the same recursion over
    ``_choices`` (which the plan is rebuilt from): equal on every sub-problem of two-deck hands."""
    from engine.melds import search

    min_set, min_run, aces = shape
    solver = engine.melds.solver.Solver(MeldRules(min_set=min_set, min_run=min_run, aces=aces))
    reference: dict[tuple[int, int], int] = {}

    def by_choices(m: int, free: int) -> int:
        if (m, free) not in reference:
            reference[m, free] = max((gain + by_choices(m2, free - need)
                                      for gain, m2, need, _ in search._choices(solver, m, free)), default=0)
        return reference[m, free]

    packed = sum(1 << search._PER_CARD * c for c in cards)
    memo: dict[int, int] = {}
    assert search._best(solver, memo, packed, wilds) == by_choices(packed, wilds)
    for key, value in memo.items():
        assert value == by_choices(key >> search._PER_CARD, key & search._COUNT)


@settings(max_examples=300)
@given(deals(standard_deck(2), 13), st.sampled_from([(3, 3, "low"), (3, 4, "high_or_low"), (2, 3, "low"),
                                                     (4, 3, "high_or_low"), (3, 3, "high_or_low")]),
       st.integers(0, 4))
def test_property_the_parts_add_up_to_the_whole(cards, shape, wilds):
    """The general search cuts a hand into parts no meld crosses and shares the wilds out among them: the
    best over the shares equals the search over the whole hand, and every card is in one part or can't meld."""
    from engine.melds import search

    min_set, min_run, aces = shape
    solver = engine.melds.solver.Solver(MeldRules(min_set=min_set, min_run=min_run, aces=aces))
    packed = sum(1 << search._PER_CARD * c for c in cards)
    present = sum(1 << c for c in set(cards))
    parts = search._parts(solver, packed, present, wilds)
    assert all(a & b == 0 for a, b in itertools.combinations(parts, 2))
    left = packed - sum(parts)
    assert search._best(solver, {}, left, wilds) == 0  # the cards left out meld nothing, even all together
    whole = search._best(solver, {}, packed, wilds)
    assert search._best_of_parts(solver, {}, parts, wilds)[-1][wilds] == whole


def test_parts_of_a_hand():
    """Cards of one rank share a part; cards of one suit do when the wilds can bridge the gap; a lone card
    that can't make a meld with the wilds is left out; a high ace joins the top of its suit."""
    from engine.melds import search

    def parts(text: str, wilds: int, aces: str = "low") -> list[str]:
        solver = engine.melds.solver.Solver(MeldRules(aces=aces))
        cards = parse_cards(text)
        packed = sum(1 << search._PER_CARD * c for c in cards)
        found = search._parts(solver, packed, sum(1 << c for c in set(cards)), wilds)
        return [" ".join(format_card(c) for c in sorted(cards) if part >> search._PER_CARD * c & search._COUNT)
                for part in found]

    assert parts("3H 3H 4H 9S 9C KD", 0) == ["3H 3H 4H"]  # a pair of nines and KD can't meld alone
    assert parts("3H 3H 4H 9S 9C KD", 2) == ["9C 9S", "KD", "3H 3H 4H"]  # in order of the lowest code
    assert parts("3H 5H 7H", 0) == []
    assert parts("3H 5H 7H", 1) == ["3H 5H 7H"]
    assert parts("AS 2S QS", 1) == ["AS 2S"]  # QS with one wild is two cards
    assert parts("AS 2S QS", 1, "high_or_low") == ["AS 2S QS"]  # QS, a wild for KS, AS


def test_the_search_memo_is_bounded(monkeypatch):
    """The memo is cleared before a search once it holds MEMO_LIMIT entries, so it never holds more than
    that plus what one search adds; and only the last solver used keeps one."""
    rules = MeldRules(wild_ranks=frozenset({6}))
    solver = engine.melds.solver.solver_for(rules)
    monkeypatch.setattr(engine.melds.search, "MEMO_LIMIT", 50)
    deck = standard_deck(2)
    hands = [[deck[(i * 7 + k * 13) % len(deck)] for k in range(8)] + [deck[(i * 7) % len(deck)]] for i in range(40)]
    one_search = 0
    for cards in hands:
        solver.memo.clear()
        min_deadwood(cards, rules)
        one_search = max(one_search, len(solver.memo))
    solver.memo.clear()
    sizes = []
    for cards in hands:
        assert min_deadwood(cards, rules) == brute_min_deadwood(cards, rules)
        sizes.append(len(solver.memo))
    assert max(sizes) <= 50 + one_search
    assert any(b < a for a, b in itertools.pairwise(sizes))  # it was cleared on the way
    min_deadwood([0, 0, 1], MeldRules(wild_ranks=frozenset({7})))
    assert not solver.memo  # one solver's memo is kept at a time
