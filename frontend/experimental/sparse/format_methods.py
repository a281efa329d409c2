"""The array operators BCSR, COO, CSR and CSC share with BCOO (`+`, `-`, `sum`,
indexing), run on their BCOO form (results: BCOO or dense, as the BCOO op gives), and
BCOO's `**` and iteration. JAX: the JAXSparse operators of jax.experimental.sparse."""
from __future__ import annotations

import operator

from mjax.experimental.sparse.bcoo import BCOO, bcoo_sum_duplicates
from mjax.experimental.sparse.bcsr import BCSR
from mjax.experimental.sparse.coo_csr import COO, CSC, CSR


def _bcoo(x):
    return x.to_bcoo() if isinstance(x, (BCSR, COO, CSR, CSC)) else x


def _via_bcoo(op):
    return lambda a, *b: op(_bcoo(a), *map(_bcoo, b))


def _pow(self, exponent):
    if not isinstance(exponent, int) or exponent <= 0:
        raise NotImplementedError(f"BCOO ** {exponent!r}: mjax raises sparse arrays to "
                                  f"positive integer powers only (0 ** p must stay 0)")
    m = self if self.unique_indices else bcoo_sum_duplicates(self, nse=self.nse)
    return BCOO((m.data ** exponent, m.indices), shape=m.shape,
                indices_sorted=m.indices_sorted, unique_indices=True)


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d sparse array")
    return (self[i] for i in range(self.shape[0]))


BCOO.__pow__ = _pow
BCOO.__iter__ = _iter
for _cls in (BCSR, COO, CSR, CSC):
    _cls.__add__ = _via_bcoo(operator.add)
    _cls.__radd__ = _via_bcoo(lambda a, b: b + a)
    _cls.__sub__ = _via_bcoo(operator.sub)
    _cls.__rsub__ = _via_bcoo(lambda a, b: b - a)
    _cls.__pos__ = lambda a: a
    _cls.__getitem__ = _via_bcoo(operator.getitem)
    _cls.sum = lambda self, *args, **kwargs: self.to_bcoo().sum(*args, **kwargs)
