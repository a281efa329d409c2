"""Dynamic slicing, gather and scatter."""
