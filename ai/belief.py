"""Belief models: which unseen card is likely to be where, from what the view shows.

The engine's :meth:`~engine.game.Game.determinize` deals the unseen cards
uniformly unless it is given a ``deal(unseen, zones, rng)`` function; this
module builds such functions from per-card weights, one table per zone. A
weight says how much more (or less) likely a card is to sit in a given hidden zone than uniform
dealing would make it. Used now by Least Score (:mod:`ai.evaluators.least_score`):
a player who has played on through the deal is likely to hold low cards (and,
with a setting that is off by default, not a hand it would have declared with). The
known cards of a zone (taken from the discard pile, bought...) are placed by
the engine itself, so consistency with the view never depends on the weights:
any weights give a legal re-deal.

Weighted sampling without replacement uses Efraimidis–Spirakis keys
(``u ** (1 / w)``, largest first): exact for one zone. The weighted zones are
filled first, in the view's order (the hands), and may be dealt again until an
``accept`` test keeps them (rejection sampling: the deals kept follow the
weights restricted to what the test accepts); the uniform zones (the stock)
then take what the hands leave, uniformly shuffled.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ai.evaluate import DealFn
from engine.cards import Card

#: weights(zone) -> a weight > 0 per card (indexed by card), or None to deal that zone uniformly
ZoneWeights = Callable[[Mapping[str, Any]], Sequence[float] | None]
#: accept(fills, rng) -> whether to keep the weighted zones' fills (in zone order; a uniform zone's is empty)
Accept = Callable[[list[list[Card]], random.Random], bool]


def weighted_deal(weights: ZoneWeights, accept: Accept | None = None, tries: int = 1) -> DealFn:
    """A ``deal`` function for :meth:`~engine.game.Game.determinize` that fills zones by ``weights``: the
    weighted zones first, in order, dealt again (at most ``tries`` times in all) until ``accept`` keeps them;
    then the uniform zones, uniformly, from the cards left."""

    def deal(unseen: list[Card], zones: list[dict[str, Any]], rng: random.Random) -> list[list[Card]]:
        needs = [zone["size"] - len(zone.get("known", ())) for zone in zones]
        tables = [weights(zone) if need > 0 else None for zone, need in zip(zones, needs, strict=True)]
        # the keys' exponents 1 / w, once per zone (not per re-deal)
        inverses = [None if t is None else [1.0 / max(w, 1e-9) for w in t] for t in tables]
        for _ in range(max(1, tries)):
            pool = list(unseen)
            fills: list[list[Card]] = [[] for _ in zones]
            for i, inverse in enumerate(inverses):
                if inverse is None:
                    continue
                if needs[i] >= len(pool):
                    rng.shuffle(pool)
                    take = list(range(needs[i]))
                else:
                    keys = [rng.random() ** inverse[c] for c in pool]
                    take = heapq.nlargest(needs[i], range(len(pool)), key=keys.__getitem__)
                chosen = set(take)
                fills[i] = [pool[j] for j in take]
                pool = [c for j, c in enumerate(pool) if j not in chosen]
            if accept is None or accept(fills, rng):
                break
        for i, table in enumerate(tables):
            if table is None and needs[i] > 0:
                rng.shuffle(pool)
                fills[i], pool = pool[: needs[i]], pool[needs[i] :]
        if pool:
            raise ValueError(f"{len(pool)} unseen cards are left over after filling the hidden zones")
        return fills

    return deal


def zone_seats(zones: Sequence[Mapping[str, Any]]) -> list[int]:
    """The seats whose hands are hidden zones of a view."""
    return [z["seat"] for z in zones if z.get("zone") == "hand" and "seat" in z]
