"""Rules for dynamic slicing, gather and scatter."""
