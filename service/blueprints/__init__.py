"""One blueprint per resource: games, matches, stateless (client-held state), ops."""
