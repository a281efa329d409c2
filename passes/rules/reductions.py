"""Rules for reductions, cumulative reductions, argmin/argmax and sort."""
