"""jax._src.test_util's test parameterization (re-exported there): sampled cartesian
products of test cases and named cases usable with `-k` filters. The decorators are
absl's `parameterized` ones; without absl-py installed they raise NotImplementedError.

    @jtu.sample_product(shape=[(3,), (2, 3)], dtype=jtu.dtypes.floating)
    def test_f(self, shape, dtype): ...

`sample_product` keeps jax_num_generated_cases (default 10) of the product's cases,
chosen as JAX chooses them (the same cases as JAX runs, for the same lists).
"""
from __future__ import annotations

import functools
import math
import os
import re

import numpy as np

from mjax.config import int_option

try:
    from absl.testing import parameterized as _parameterized
except ImportError:         # (absl-py is not a dependency of mjax)
    _parameterized = None

NUM_GENERATED_CASES = int_option(
    "jax_num_generated_cases", int(os.getenv("JAX_NUM_GENERATED_CASES", "10")),
    "How many cases sample_product and the case samplers generate.")
_MAX_CASES_SAMPLING_RETRIES = int_option(
    "max_cases_sampling_retries", int(os.getenv("JAX_MAX_CASES_SAMPLING_RETRIES", "100")),
    "Draws named_cases_from_sampler makes for an unseen case before it stops.")

_SANITIZE = re.compile(r"[ \"'\[\](){}<>=,._]+")


def sanitize_test_name(s: str) -> str:
    """The runs of characters `-k` filters choke on, each replaced by '_'."""
    return _SANITIZE.sub("_", s)


def _absl(what: str):
    if _parameterized is None:
        raise NotImplementedError(f"jtu.{what} needs absl-py's parameterized tests "
                                  "(pip install absl-py)")
    return _parameterized


def cases_from_gens(*gens):
    """('_<size>_<i>', gen(size) for each gen) for sizes 1, 3 and 10."""
    sizes = [1, 3, 10]
    per_size = int(NUM_GENERATED_CASES.value / len(sizes)) + 1
    for size in sizes:
        for i in range(per_size):
            yield (f"_{size}_{i}",) + tuple(gen(size) for gen in gens)


def named_cases_from_sampler(gen):
    """Distinct cases (by testcase_name) drawn from `gen(choose_one)`, a generator
    yielding one case dict per call, until jax_num_generated_cases are found."""
    seen: set = set()
    retries = 0
    rng = np.random.RandomState(42)

    def choose_one(x):
        if not isinstance(x, (list, tuple)):
            x = list(x)
        return [x[rng.randint(len(x))]]
    while len(seen) < NUM_GENERATED_CASES.value and \
            retries < _MAX_CASES_SAMPLING_RETRIES.value:
        retries += 1
        cases = list(gen(choose_one))
        if not cases:
            continue
        if len(cases) > 1:
            raise RuntimeError("Generator is expected to only return a single case when "
                               "sampling")
        case = cases[0]
        if case["testcase_name"] in seen:
            continue
        retries = 0
        seen.add(case["testcase_name"])
        yield case


@functools.cache
def _choice(n: int, m: int):
    """m distinct case numbers below n (the same in every run)."""
    return np.random.RandomState(42).choice(n, size=m, replace=False)


def sample_product_testcases(*args, **kw) -> list:
    """The cases sample_product keeps, as a list of dicts."""
    args = [list(a) for a in args]
    kw = [(k, list(v)) for k, v in kw.items()]
    n = math.prod(len(a) for a in args) * math.prod(len(v) for _, v in kw)
    cases = []
    for i in _choice(n, min(n, NUM_GENERATED_CASES.value)):
        case = {}
        for a in args:              # (case number i in mixed radix over the lists)
            case.update(a[i % len(a)])
            i //= len(a)
        for k, v in kw:
            case[k] = v[i % len(v)]
            i //= len(v)
        cases.append(case)
    return cases


def sample_product(*args, **kw):
    """Test decorator: parameterized.parameters over a sample of the cartesian product
    of `args` (lists of dicts of correlated arguments) and `kw` (lists of values)."""
    return _absl("sample_product").parameters(*sample_product_testcases(*args, **kw))


def parameterized_filterable(*, kwargs, testcase_name=None, one_containing=None):
    """parameterized.named_parameters over `kwargs` (dicts of arguments), each named by
    `testcase_name(kw)`, its own 'testcase_name' or its items, sanitized for `-k`.
    `one_containing`: only the first case whose name contains it, left unnamed."""
    named = _absl("parameterized_filterable").named_parameters
    if testcase_name is not None:
        cases = [dict(testcase_name=sanitize_test_name(str(testcase_name(kw))), **kw)
                 for kw in kwargs]
    else:
        for kw in kwargs:
            name = kw.get("testcase_name")
            if name is None:
                name = "_".join(f"{k}={kw[k]}" for k in sorted(kw))
            kw["testcase_name"] = sanitize_test_name(name)
        cases = kwargs
    if one_containing is None:
        return named(*cases)
    chosen = [kw for kw in cases if one_containing in kw["testcase_name"]]
    assert chosen, (f"No testcase_name contains '{one_containing}'. The testcase_name "
                    "values are\n  " + "\n  ".join(kw["testcase_name"] for kw in cases))
    chosen[0]["testcase_name"] = ""
    return named([chosen[0]])
