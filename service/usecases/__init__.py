"""The use cases behind the match endpoints, one small module each, talking to the engine through the generic
:class:`~engine.game.Game` interface (a newly registered game is served with no change) and to Redis through
the store port. They raise domain errors (:mod:`service.usecases.errors`, or the engine's); the HTTP layer
turns those into answers in one place (:mod:`service.errors`).

* :mod:`~service.usecases.tokens`: seat tokens (made, hashed, derived from an Idempotency-Key, checked);
* :mod:`~service.usecases.loading`: a stored match parsed once per version per process (:class:`MatchCache`);
* :mod:`~service.usecases.views`: what a seat or a spectator may see: views, legal moves, the log;
* :mod:`~service.usecases.moves`: applying a move and the one save path every writer uses (:func:`commit`);
* :mod:`~service.usecases.creating`: new matches, and the first answer to a retried creation;
* :mod:`~service.usecases.ai_work`: AI work as the HTTP side asks for it (hints, best moves, the AI seats'
  turns, all queued for the AI workers), and waiting for a match to move on.
"""
