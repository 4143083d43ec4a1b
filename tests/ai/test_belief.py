"""The belief models' deal (ai/belief.py): weighted zones first, dealt again until an ``accept`` test keeps
them, the uniform zones from what is left; every deal uses each unseen card once."""

from __future__ import annotations

import random
from collections import Counter

from ai.belief import weighted_deal

UNSEEN = list(range(21))
# the second hand holds a known card (not among the unseen ones) and lacks 4: 4 + 4 + 13 = 21
ZONES = [{"zone": "hand", "seat": 1, "size": 4}, {"zone": "hand", "seat": 2, "size": 5, "known": ["XX"]},
         {"zone": "deck", "size": 13}]


def _weights(zone):  # low card ids ten times as likely in a hand; the deck uniform
    return [10.0 if c < 10 else 1.0 for c in range(21)] if zone["zone"] == "hand" else None


def test_each_unseen_card_is_dealt_once_and_each_zone_gets_what_it_lacks() -> None:
    deal = weighted_deal(_weights)
    rng = random.Random(1)
    for _ in range(200):
        fills = deal(UNSEEN, ZONES, rng)
        assert [len(f) for f in fills] == [4, 4, 13]
        assert sorted(c for f in fills for c in f) == UNSEEN


def test_the_weights_lean_the_hands_to_their_cards() -> None:
    deal = weighted_deal(_weights)
    rng = random.Random(2)
    low = Counter(sum(c < 10 for c in deal(UNSEEN, ZONES, rng)[0]) for _ in range(500))
    assert sum(k * n for k, n in low.items()) / 500 > 3.0  # 4 cards, 10 of 21 low: about 1.9 if uniform


def test_a_deal_is_dealt_again_until_the_test_keeps_it_and_at_most_tries_times() -> None:
    tests = []

    def no_card_0_in_a_hand(fills, rng):
        tests.append([list(f) for f in fills])
        return 0 not in fills[0] and 0 not in fills[1]

    deal = weighted_deal(_weights, no_card_0_in_a_hand, tries=50)
    rng = random.Random(3)
    for _ in range(100):
        fills = deal(UNSEEN, ZONES, rng)
        assert 0 in fills[2]  # card 0 always ends in the deck
        assert tests[-1][:2] == fills[:2] and tests[-1][2] == []  # the test sees the hands, not the deck yet
    refused = []
    never = weighted_deal(_weights, lambda fills, rng: refused.append(1) is not None, tries=5)
    fills = never(UNSEEN, ZONES, random.Random(4))
    assert len(refused) == 5  # dealt five times in all ...
    assert sorted(c for f in fills for c in f) == UNSEEN  # ... and the last deal is kept
