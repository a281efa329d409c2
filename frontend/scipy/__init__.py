"""`mjax.scipy`: the parts of SciPy that JAX mirrors (`jax.scipy`), over `mjax.numpy`."""
from mjax.scipy import cluster  # noqa: F401
from mjax.scipy import fft  # noqa: F401
from mjax.scipy import integrate  # noqa: F401
from mjax.scipy import interpolate  # noqa: F401
from mjax.scipy import linalg  # noqa: F401
from mjax.scipy import ndimage  # noqa: F401
from mjax.scipy import optimize  # noqa: F401
from mjax.scipy import signal  # noqa: F401
from mjax.scipy import sparse  # noqa: F401
from mjax.scipy import spatial  # noqa: F401
from mjax.scipy import special  # noqa: F401
from mjax.scipy import stats  # noqa: F401
