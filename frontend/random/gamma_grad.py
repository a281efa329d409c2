"""d x / d a for a Gamma(a, 1) sample x: `mjax.lax.random_gamma_grad` (this name stays
for mjax.random until its split into a package)."""
from mjax.lax.special_functions import random_gamma_grad  # noqa: F401
