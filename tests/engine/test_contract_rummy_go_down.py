"""Contract rummy, going down (RULES.md §4 R2, R3, R6, R8): the listed ``go_down`` moves against an
independent brute-force search over every meld a hand can make.

The property: for any hand of any contract, under every ``wild_limit`` and ``contract_meld_size``, the
list holds a ``go_down`` exactly when some legal arrangement exists (the brute force finds one and the
validator accepts it), and every listed move is accepted by the validator.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import contracts
from engine.cards import CARD_NAMES, JOKER, parse_card, parse_cards
from engine.errors import IllegalMoveError
from engine.games.contract_rummy import CONTRACTS, MAX_LISTED_GO_DOWNS
from engine.registry import get_game
from tests.engine import test_contract_rummy as base

GAME: Any = get_game("contract-rummy")
WILD_CARDS = (1, 14, 27, 40, JOKER)


# ---------------------------------------------------------------------------
# The brute force: its own statement of the rules, sharing no search code with the engine


def _limit_ok(naturals: int, wilds: int, limit: str) -> bool:
    """R3: a meld holds a natural card, and by ``wild_limit`` no more / fewer wilds than naturals."""
    if naturals < 1:
        return False
    if limit == "not_more_than_naturals":
        return wilds <= naturals
    if limit == "fewer_than_naturals":
        return wilds < naturals
    return True


def _card_at(suit: int, pos: int) -> int:
    """The card of run place ``pos`` (1 = ace low ... 13 = king, 14 = ace high)."""
    return suit * 13 + (0 if pos == 14 else pos - 1)


def brute_go_down(hand: list[int], hand_no: int, limit: str, exact: bool = False,
                  keep_out: int | None = None) -> dict[str, Any] | None:
    """A legal go_down move for ``hand`` (the cards held in phase play), or None when there is none.

    Tries every meld of the contract in turn: every run (any suit, place and length, or exactly the
    contract length when ``exact``; in each place the natural card, if still held, or a wild) and every
    set (any number of each natural of its rank and of wilds). Wilds are counted as slots and dealt out
    at the end: a set of 2s takes jokers (a 2 there is natural), any other wild place a joker or a 2.
    A 2 dealt to its own place in a run is natural, which only helps the wild limit.
    """
    sets, runs, run_size, _ = CONTRACTS[hand_no]
    whole = hand_no == 7  # the whole hand but one card, melds of any length (R8)
    exact = exact and not whole
    counts = [0] * 53
    for c in hand:
        counts[c] += 1
    kinds = ["run"] * runs + ["set"] * sets
    trail: list[tuple[Any, ...]] = []
    failed: set[tuple[Any, ...]] = set()

    def wilds_held() -> int:
        return sum(counts[c] for c in WILD_CARDS)

    def finish(any_slots: int, joker_slots: int) -> dict[str, Any] | None:
        rest = [c for c in range(53) for _ in range(counts[c])]
        for left in sorted(set(rest)) if whole else [None]:
            if whole and left == keep_out:
                continue
            held = list(rest)
            if left is not None:
                held.remove(left)
            jokers = [c for c in held if c == JOKER]
            twos = [c for c in held if c in WILD_CARDS and c != JOKER]
            if whole and len(held) != len(jokers) + len(twos):
                continue  # every card but the one left goes down
            if joker_slots > len(jokers) or any_slots > len(jokers) + len(twos) - joker_slots:
                continue
            kept = len(held) - any_slots - joker_slots
            if (whole and kept != 0) or (not whole and kept < 1):
                continue
            return _move(trail, jokers, twos)
        return None

    def dfs(depth: int, any_slots: int, joker_slots: int) -> dict[str, Any] | None:
        key = (depth, tuple(counts), any_slots, joker_slots)
        if key in failed:
            return None
        if depth == len(kinds):
            found = finish(any_slots, joker_slots)
        elif kinds[depth] == "run":
            found = runs_at(depth, any_slots, joker_slots)
        else:
            found = sets_at(depth, any_slots, joker_slots)
        if found is None:
            failed.add(key)
        return found

    def runs_at(depth: int, any_slots: int, joker_slots: int) -> dict[str, Any] | None:
        room = wilds_held() - any_slots - joker_slots
        for suit in range(4):
            for size in (run_size,) if exact else range(run_size, 14):
                for low in range(1, 16 - size):
                    places = [_card_at(suit, p) for p in range(low, low + size)]
                    if sum(1 for c in places if counts[c]) + room < size:
                        continue
                    found = place(suit, low, places, [], depth, any_slots, joker_slots, room)
                    if found is not None:
                        return found
        return None

    def place(suit: int, low: int, places: list[int], slots: list[int | None], depth: int, any_slots: int,
              joker_slots: int, room: int) -> dict[str, Any] | None:
        wild = slots.count(None)
        if wild > room:
            return None
        if len(slots) == len(places):
            if not _limit_ok(len(slots) - wild, wild, limit):
                return None
            trail.append(("run", suit, low, list(slots)))
            found = dfs(depth + 1, any_slots + wild, joker_slots)
            trail.pop()
            return found
        c = places[len(slots)]
        if counts[c]:
            counts[c] -= 1
            found = place(suit, low, places, [*slots, c], depth, any_slots, joker_slots, room)
            counts[c] += 1
            if found is not None:
                return found
        return place(suit, low, places, [*slots, None], depth, any_slots, joker_slots, room)

    def sets_at(depth: int, any_slots: int, joker_slots: int) -> dict[str, Any] | None:
        room = wilds_held() - any_slots - joker_slots
        for rank in range(1, 14):
            found = pick(rank, [rank - 1 + 13 * s for s in range(4)], [], depth, any_slots, joker_slots, room)
            if found is not None:
                return found
        return None

    def pick(rank: int, todo: list[int], naturals: list[int], depth: int, any_slots: int, joker_slots: int,
             room: int) -> dict[str, Any] | None:
        if todo:
            c, more = todo[0], todo[1:]
            for k in range(counts[c] + 1):
                counts[c] -= k
                found = pick(rank, more, naturals + [c] * k, depth, any_slots, joker_slots, room)
                counts[c] += k
                if found is not None:
                    return found
            return None
        n = len(naturals)
        for w in range(room + 1):
            if n + w < 3 or (exact and n + w != 3) or not _limit_ok(n, w, limit):
                continue
            trail.append(("set", rank, naturals, w))
            if rank == 2:  # the wild places of a set of 2s take jokers
                found = dfs(depth + 1, any_slots, joker_slots + w)
            else:
                found = dfs(depth + 1, any_slots + w, joker_slots)
            trail.pop()
            if found is not None:
                return found
        return None

    return dfs(0, 0, 0)


def _move(trail: list[tuple[Any, ...]], jokers: list[int], twos: list[int]) -> dict[str, Any]:
    """The go_down move of the melds in ``trail``, dealing out the wild cards."""
    jokers, twos = list(jokers), list(twos)
    set_wilds: dict[int, list[int]] = {}
    for i, meld in enumerate(trail):
        if meld[0] == "set" and meld[1] == 2:
            set_wilds[i] = [jokers.pop() for _ in range(meld[3])]
    pool = jokers + twos
    melds = []
    for i, meld in enumerate(trail):
        if meld[0] == "set":
            wilds = set_wilds[i] if i in set_wilds else [pool.pop() for _ in range(meld[3])]
            melds.append({"kind": "set", "cards": [CARD_NAMES[c] for c in meld[2] + wilds]})
        else:
            _, suit, low, slots = meld
            cards = [c if c is not None else pool.pop() for c in slots]
            melds.append({"kind": "run", "cards": [CARD_NAMES[c] for c in cards],
                          "stands_for": [CARD_NAMES[_card_at(suit, p)] for p in range(low, low + len(cards))]})
    return {"type": "go_down", "melds": melds}


# ---------------------------------------------------------------------------
# Positions


def play_state(hand: list[int], taken: int, hand_no: int, options: dict[str, Any]) -> Any:
    """Seat 0 of three in phase play of hand ``hand_no`` holding exactly ``hand``, ``taken`` (one of its
    cards) just taken from the discard pile; buys make up any cards beyond the deal."""
    rest = list(hand)
    rest.remove(taken)
    deal = CONTRACTS[hand_no][3]
    assert (len(rest) - deal) % 2 == 0 and len(rest) >= deal
    state = base.setup([" ".join(CARD_NAMES[c] for c in rest), deal, deal], round=hand_no,
                       discard=CARD_NAMES[taken], buys=[(len(rest) - deal) // 2, 0, 0], options=options)
    state = base.play(state, {"type": "take_discard"})
    assert sorted(state.hands[0]) == sorted(hand)
    return state


def listed_go_downs(state: Any) -> list[dict[str, Any]]:
    return [m for m in GAME.legal_moves(state) if m["type"] == "go_down"]


def check_listing(state: Any, hand: list[int], taken: int, hand_no: int, options: dict[str, Any]) -> list[Any]:
    """The property, for one position; returns the listed moves."""
    limit, exact = options["wild_limit"], options["contract_meld_size"] == "exact"
    keep_out = taken if hand_no == 7 and not options["allow_rediscard"] else None
    listed = listed_go_downs(state)
    witness = brute_go_down(hand, hand_no, limit, exact, keep_out)
    names = " ".join(CARD_NAMES[c] for c in sorted(hand))
    assert bool(listed) == (witness is not None), (hand_no, options, names, witness)
    if witness is not None:
        after, _ = GAME.apply(state, witness)  # the validator accepts what the brute force found
        assert after.down[0]
    assert len(listed) <= MAX_LISTED_GO_DOWNS
    assert len({base.norm(m) for m in listed}) == len(listed)
    for move in listed:
        after, _ = GAME.apply(state, move)  # check=True: the full validator
        assert after.down[0]
        assert after == GAME.apply(state, move, check=False)[0]
        left = len(after.hands[0])
        assert left == 1 if hand_no == 7 else left >= 1
    return listed


# ---------------------------------------------------------------------------
# The property


DECK = sorted(GAME.deck(4, GAME.check_options({})))  # two decks and four jokers


@st.composite
def positions(draw: Any) -> tuple[list[int], int, int, dict[str, Any]]:
    """A hand drawn from a few suits, a window of ranks and every wild (so that melds are likely)."""
    hand_no = draw(st.integers(1, 7))
    options = {"wild_limit": draw(st.sampled_from(contracts.WILD_LIMITS)),
               "contract_meld_size": draw(st.sampled_from(("at_least", "exact"))),
               "allow_rediscard": draw(st.booleans())}
    buys = draw(st.sampled_from((0, 0, 0, 1, 2)))
    size = CONTRACTS[hand_no][3] + 1 + 2 * buys
    suits = draw(st.sets(st.integers(0, 3), min_size=1, max_size=3))
    first = draw(st.integers(0, 12))
    ranks = {(first + i) % 13 for i in range(draw(st.integers(4, 8)))}  # may wrap round: aces high and low
    pool = [c for c in DECK if c in WILD_CARDS or (c // 13 in suits and c % 13 in ranks)]
    order = draw(st.permutations(pool))
    hand = sorted(order[:size])
    taken = order[draw(st.integers(0, size - 1))]
    return hand, taken, hand_no, options


@settings(max_examples=400)
@given(positions())
def test_go_downs_are_listed_exactly_when_one_is_legal(position):
    hand, taken, hand_no, options = position
    state = play_state(hand, taken, hand_no, options)
    check_listing(state, hand, taken, hand_no, options)


def test_brute_force_finds_the_worked_examples():
    """The brute force itself: CR3 and CR7 can go down, a hand one card short cannot."""
    assert brute_go_down(parse_cards("7S 7H 7D QC QD JK 5C 8S"), 1, "at_least_one_natural") is not None
    assert brute_go_down(parse_cards("7S 7H 8D QC QD JK 5C 8S"), 1, "fewer_than_naturals") is None
    hand = parse_cards("3D 4D 5D 6D 7D 9C TC JC QC KS KH KD 8S")
    assert brute_go_down(hand, 7, "at_least_one_natural") is not None
    assert brute_go_down(hand, 7, "at_least_one_natural", keep_out=parse_card("8S")) is None


# ---------------------------------------------------------------------------
# Runs longer than the contract's (a strict wild limit)


def _position(text: str, hand_no: int, **options: Any) -> tuple[Any, list[int], int]:
    """A position from a hand written out; its last card is the one taken from the discard pile."""
    hand = parse_cards(text)
    opts = {"wild_limit": "at_least_one_natural", "contract_meld_size": "at_least", "allow_rediscard": False,
            **options}
    return play_state(sorted(hand), hand[-1], hand_no, opts), sorted(hand), hand[-1]


def _runs(move: dict[str, Any]) -> list[str]:
    return [" ".join(m["stands_for"]) for m in move["melds"] if m["kind"] == "run"]


def test_fewer_than_naturals_lists_a_run_of_5_where_no_run_of_4_meets_the_limit():
    # 5H 7H 9H and two wilds: 5H-9H (3 natural, 2 wild) is legal; every 4-card window has 2 wilds to 2
    text = "5H 7H 9H JK 2C KS KD KC 4S"
    state, hand, taken = _position(text, 2, wild_limit="fewer_than_naturals")
    listed = check_listing(state, hand, taken, 2, state.options)
    assert [_runs(m) for m in listed] == [["5H 6H 7H 8H 9H"]]
    assert base.norm(listed[0]) == base.norm(base.go_down(("set", "KS KD KC"), ("run", "5H JK 7H 2C 9H")))
    # not_more_than_naturals: runs of 4 meet it (one placement per pair of naturals), and only those are listed
    state, hand, taken = _position(text, 2, wild_limit="not_more_than_naturals")
    listed = check_listing(state, hand, taken, 2, state.options)
    assert sorted(_runs(m)[0] for m in listed) == ["4H 5H 6H 7H", "6H 7H 8H 9H"]


def test_exact_meld_size_lists_no_longer_run_and_the_validator_agrees():
    text = "5H 7H 9H JK 2C KS KD KC 4S"
    state, hand, taken = _position(text, 2, wild_limit="fewer_than_naturals", contract_meld_size="exact")
    assert check_listing(state, hand, taken, 2, state.options) == []
    move = base.go_down(("set", "KS KD KC"), ("run", "5H JK 7H 2C 9H", "5H 6H 7H 8H 9H"))
    with pytest.raises(IllegalMoveError, match="exactly 4 cards"):
        GAME.apply(state, move)


def test_hand_5_not_more_than_naturals_lists_a_run_of_8():
    # 3H W W 6H 7H W W TH: four natural, four wild; each 7-card window holds three naturals to four wilds
    text = "3H 6H 7H TH JK JK 2C 2D KS KD KC 5S"
    state, hand, taken = _position(text, 5, wild_limit="not_more_than_naturals")
    listed = check_listing(state, hand, taken, 5, state.options)
    assert [_runs(m) for m in listed] == [["3H 4H 5H 6H 7H 8H 9H TH"]]


def test_two_runs_of_5_interleaved_under_fewer_than_naturals():
    # hand 3: W-J-Q-K and 8-W-T-W-Q; no way with runs of 4 only
    text = "2C 2H 2H 2S 8S TS JS QS QS KS"
    state, hand, taken = _position(text, 3, wild_limit="fewer_than_naturals")
    listed = check_listing(state, hand, taken, 3, state.options)
    assert listed and all(any(len(r.split()) > 4 for r in _runs(m)) for m in listed)


def test_a_longer_run_never_takes_the_last_card():
    # two runs of 5 and a set of 2s would use all 13 cards: not listed (a card must be left to discard)
    text = "2C 2C 7C 7C 8C 9C JC JC 2D 2H JK JK JK"
    state, hand, taken = _position(text, 6, wild_limit="fewer_than_naturals")
    assert check_listing(state, hand, taken, 6, state.options) == []


def test_the_cap_keeps_places_for_the_longer_runs():
    # hand 6 (one buy) under fewer_than_naturals: runs of 4 alone give more ways than the cap, and a way
    # with AH-2C-3H-2D-5H (the set of 4s taking 4H) would be cut off without the places kept for it
    text = "2C 2C 4C 5C 6C 6C 7C 8C 2D AH 3H 4H 5H 6H 7H"
    hand = sorted(parse_cards(text))
    limit = "fewer_than_naturals"
    assert len(contracts.minimal_go_downs(hand, 1, 2, 3, 4, limit, MAX_LISTED_GO_DOWNS, longer=False)) \
        == MAX_LISTED_GO_DOWNS
    found = contracts.minimal_go_downs(hand, 1, 2, 3, 4, limit, MAX_LISTED_GO_DOWNS)
    assert len(found) == MAX_LISTED_GO_DOWNS
    longer = [way for way in found if any(m[0] >= 0 and len(m[2]) > 4 for m in way)]
    assert 1 <= len(longer) <= MAX_LISTED_GO_DOWNS // 4
    assert found[-len(longer):] == longer  # listed after the ways with runs of 4
    state, hand, taken = _position(text, 6, wild_limit=limit)
    listed = check_listing(state, hand, taken, 6, state.options)
    assert [r for r in _runs(listed[-1]) if r.startswith("AH")] == ["AH 2H 3H 4H 5H"]


# ---------------------------------------------------------------------------
# Hand 7: every split of two runs of one suit


def _naturals(move: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
    """The natural cards of each run of a go_down (what the split is)."""
    out = []
    for m in move["melds"]:
        if m["kind"] == "run":
            out.append(tuple(c for c, sf in zip(m["cards"], m["stands_for"], strict=True) if c == sf))
    return tuple(sorted(out))


def test_hand_7_lists_both_splits_of_nine_diamonds():
    text = "3D 4D 5D 6D 7D 8D 9D TD JD KS KH KC 5C"
    state, hand, taken = _position(text, 7, allow_rediscard=True)
    listed = check_listing(state, hand, taken, 7, state.options)
    assert sorted(_runs(m) for m in listed) == [["3D 4D 5D 6D", "7D 8D 9D TD JD"],
                                                 ["3D 4D 5D 6D 7D", "8D 9D TD JD"]]


def test_hand_7_lists_interleaved_splits():
    # 3D-9D, two jokers and three kings: besides the splits at a rank (3-4-JK-JK / 5-9, 3-6 / 7-8-9-JK ...)
    # the runs may cross: 3-4-5-JK(6)-7 / 6-JK(7)-8-9 and 3-4-JK(5)-6 / 5-JK(6)-7-8-9
    text = "3D 4D 5D 6D 7D 8D 9D JK JK KS KH KC 5C"
    state, hand, taken = _position(text, 7, allow_rediscard=True)
    listed = check_listing(state, hand, taken, 7, state.options)
    # every split of the seven diamonds into two runs that the two jokers can fill is there
    expected = set()
    diamonds = parse_cards("3D 4D 5D 6D 7D 8D 9D")
    for mask in range(1, (1 << len(diamonds)) - 1):
        one = [c for i, c in enumerate(diamonds) if mask >> i & 1]
        two = [c for c in diamonds if c not in one]
        if sum(max(4, max(r) - min(r) + 1) - len(r) for r in (one, two)) <= 2:
            expected.add(tuple(sorted((tuple(CARD_NAMES[c] for c in one), tuple(CARD_NAMES[c] for c in two)))))
    assert {_naturals(m) for m in listed} == expected
    assert (("3D", "4D", "5D", "7D"), ("6D", "8D", "9D")) in expected
    assert (("3D", "4D", "6D"), ("5D", "7D", "8D", "9D")) in expected
    # the first way of each split comes before any second way of one
    keys = [_naturals(m) for m in listed]
    firsts = list(dict.fromkeys(keys))
    assert len(firsts) == len(expected) and keys[:len(firsts)] == firsts


def test_hand_7_set_of_2s_with_2s_wild_in_the_runs():
    # fewer_than_naturals: the set is of 2s, and the runs take other 2s as wilds (5-8C, 7-JS)
    text = "5C 6C 7C 2D 2D 2H 2H 2S 2S 7S 8S 9S JK"
    state, hand, taken = _position(text, 7, wild_limit="fewer_than_naturals", allow_rediscard=True)
    listed = check_listing(state, hand, taken, 7, state.options)
    way = base.go_down(("set", "2S 2S JK"), ("run", "5C 6C 7C 2D", "5C 6C 7C 8C"),
                       ("run", "7S 8S 9S 2H 2H", "7S 8S 9S TS JS"))
    assert base.norm(way) in [base.norm(m) for m in listed]
    assert all(m["kind"] != "set" or all(c[0] == "2" or c == "JK" for c in m["cards"])
               for move in listed for m in move["melds"])


def test_hand_7_a_run_reaches_down_to_its_own_2():
    # fewer_than_naturals: 2D-3D-W-5D-6D (the 2 natural in its place), not 3D-W-5D-6D-2D(as 7D)
    text = "2C 2D 5D 6D 6D 2H 6H 6H 7H 8H 2S JK JK"
    state, hand, taken = _position(text, 7, wild_limit="fewer_than_naturals", allow_rediscard=True)
    listed = check_listing(state, hand, taken, 7, state.options)
    assert any("2D 3D 4D 5D 6D" in _runs(m) for m in listed)
    for move in listed:
        for m in move["melds"]:
            if m["kind"] == "run":
                suit, low, cards = contracts.read_run(parse_cards(m["cards"]), "fewer_than_naturals",
                                                      parse_cards(m["stands_for"]))
                nat, wild = contracts.meld_counts((suit, low, cards))
                assert wild < nat


def test_hand_7_a_run_whose_only_natural_card_is_its_2():
    # 2S JK JK JK is a run (2S natural in place 2); with 5H-9H and three kings it takes the whole hand but 4C
    text = "5H 6H 7H 8H 9H 2S JK JK JK 4C KS KH KC"
    state, hand, taken = _position(text, 7)
    listed = check_listing(state, hand, taken, 7, state.options)
    way = base.go_down(("set", "KS KH KC"), ("run", "5H 6H 7H 8H 9H"), ("run", "2S JK JK JK", "2S 3S 4S 5S"))
    assert base.norm(way) in [base.norm(m) for m in listed]


def test_hand_7_the_cap_lists_every_split_first():
    # three jokers give each split many ways to share them out; every split is still listed
    text = "3D 4D 5D 6D 7D 8D 9D TD KS KH KC JK JK JK 5C"
    state, hand, taken = _position(text, 7, allow_rediscard=True)
    listed = check_listing(state, hand, taken, 7, state.options)
    assert len(listed) == MAX_LISTED_GO_DOWNS
    keys = [_naturals(m) for m in listed]
    firsts = list(dict.fromkeys(keys))
    assert keys[:len(firsts)] == firsts
    cuts = {(tuple(CARD_NAMES[c] for c in parse_cards("3D 4D 5D 6D 7D 8D 9D TD")[:k]),
             tuple(CARD_NAMES[c] for c in parse_cards("3D 4D 5D 6D 7D 8D 9D TD")[k:])) for k in range(1, 8)}
    assert {tuple(sorted(c)) for c in cuts} <= set(firsts)


def test_counts_of_listed_cards_match_the_hand():
    state, hand, _ = _position("3D 4D 5D 6D 7D 8D 9D TD JD KS KH KC 5C", 7, allow_rediscard=True)
    for move in listed_go_downs(state):
        used = Counter(c for m in move["melds"] for c in parse_cards(m["cards"]))
        assert not used - Counter(hand) and sum(used.values()) == len(hand) - 1


def test_hand_7_a_run_of_13_is_listed_ace_low_as_the_validator_reads_it():
    # 3H-KH and two jokers make a run of 13: A-K (JK JK 3H ... KH), the cards of 2-A, which read_run reads
    # as A-K; the listed move and the validated one leave the same state (check_listing compares them)
    text = "3H 4H 5H 6H 7H 8H 9H TH JH QH KH JK JK 5S 6S 7S 8S 9C QC QD QS"
    state, hand, taken = _position(text, 7)
    listed = check_listing(state, hand, taken, 7, state.options)
    thirteen = [r for m in listed for r in _runs(m) if len(r.split()) == 13]
    assert thirteen and all(r.startswith("AH 2H 3H") for r in thirteen)
