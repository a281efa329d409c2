"""`python -m mjax.config`: prints every option, its value and where it came from."""
from mjax.config import main

main()
