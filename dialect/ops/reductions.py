"""Reductions, cumulative reductions, argmin/argmax and sort."""
