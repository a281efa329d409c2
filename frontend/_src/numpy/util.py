"""jax._src.numpy.util: promote_dtypes_inexact, by mjax.numpy's own promotion."""
from mjax.numpy.promotion import promote as _promote


def promote_dtypes_inexact(*args):
    """The arguments converted to one inexact dtype by JAX's promotion rules (integers
    and bools to the default float), shapes unchanged. JAX:
    jax._src.numpy.util.promote_dtypes_inexact."""
    return _promote("promote_dtypes_inexact", *args, inexact=True, broadcast=False)
