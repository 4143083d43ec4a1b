"""The AI worker tier: AI jobs on a Redis Stream, admitted by cost, run by AI worker processes."""
