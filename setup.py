"""Builds the optional C extension; everything else is in pyproject.toml.

`mjax.runtime._fastpath` (runtime/_fastpath.c, CPython C API only) is the cached `jit`
call's fast path, `mjax.runtime._eagerpath` (runtime/_eagerpath.c) eager ops' cache
hit. They are optional: without a C compiler the install goes on, and mjax
uses the same path in Python (also forced by MJAX_NO_C_FASTPATH=1).
"""
from setuptools import Extension, setup

# runtime/_mjax_fast.h: the Array-slot helpers both include (MANIFEST.in ships it in the
# sdist; `depends` rebuilds both when it changes).
_SHARED = ["runtime/_mjax_fast.h"]
setup(ext_modules=[Extension("mjax.runtime._fastpath", ["runtime/_fastpath.c"],
                             depends=_SHARED, optional=True),
                   Extension("mjax.runtime._eagerpath", ["runtime/_eagerpath.c"],
                             depends=_SHARED, optional=True)])
