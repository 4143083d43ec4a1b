"""Belief models: which unseen card is likely to be where, from what the view shows.

The engine's :meth:`~engine.game.Game.determinize` deals the unseen cards
uniformly unless it is given a ``deal(unseen, zones, rng)`` function; this
module builds such functions from per-card weights. A weight says how much
more (or less) likely a card is to sit in a given hidden zone than uniform
dealing would make it. Used now by Least Score (:mod:`ai.evaluators.least_score`):
a player who has played on through the deal is likely to hold low cards. The
known cards of a zone (taken from the discard pile, bought...) are placed by
the engine itself, so consistency with the view never depends on the weights:
any weights give a legal re-deal.

Weighted sampling without replacement uses Efraimidis–Spirakis keys
(``u ** (1 / w)``, largest first): exact for one zone, and zones are filled in
the view's order (hands first, the stock last), so the stock takes what the
hands leave, uniformly shuffled.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ai.evaluate import DealFn
from engine.cards import Card

#: weight(zone, card) -> weight > 0, or None to deal that zone uniformly
ZoneWeight = Callable[[Mapping[str, Any], Card], float | None]


def weighted_deal(weight: ZoneWeight) -> DealFn:
    """A ``deal`` function for :meth:`~engine.game.Game.determinize` that fills zones by ``weight``."""

    def deal(unseen: list[Card], zones: list[dict[str, Any]], rng: random.Random) -> list[list[Card]]:
        pool = list(unseen)
        fills: list[list[Card]] = []
        for zone in zones:
            need = zone["size"] - len(zone.get("known", ()))
            if need <= 0:
                fills.append([])
                continue
            weights = [weight(zone, c) for c in pool]
            if any(w is None for w in weights) or need >= len(pool):
                rng.shuffle(pool)
                take = list(range(need))
            else:
                keys = [rng.random() ** (1.0 / max(w or 0.0, 1e-9)) for w in weights]
                take = sorted(range(len(pool)), key=keys.__getitem__, reverse=True)[:need]
            chosen = set(take)
            fills.append([pool[i] for i in take])
            pool = [c for i, c in enumerate(pool) if i not in chosen]
        if pool:
            raise ValueError(f"{len(pool)} unseen cards are left over after filling the hidden zones")
        return fills

    return deal


def zone_seats(zones: Sequence[Mapping[str, Any]]) -> list[int]:
    """The seats whose hands are hidden zones of a view."""
    return [z["seat"] for z in zones if z.get("zone") == "hand" and "seat" in z]
