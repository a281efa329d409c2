"""How many programs of a corpus give, under jit on the CPU, results bit-identical to JAX's
(test/frontend/bit_identical_corpus.py: jnp/lax/scipy ops and their gradients, the ELBO of
the variational-inference example, MLP and CNN training steps), and for each that does not,
the reason (ulps apart; the StableHLO ops that differ in kind or count).

    python benchmarks/bit_identical.py [substring ...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test",
                                "frontend"))

import bit_identical_corpus as corpus  # noqa: E402


def main(argv):
    names = [n for n in corpus.PROGRAMS if not argv[1:] or any(s in n for s in argv[1:])]
    results = corpus.run(names)
    same = [n for n, (ok, _) in results.items() if ok]
    for n, (ok, why) in results.items():
        if not ok:
            print(f"DIFFERS  {n}: {why}")
    print(f"\n{len(same)} of {len(results)} programs bit-identical to JAX's "
          f"({100 * len(same) / max(len(results), 1):.1f}%)")


if __name__ == "__main__":
    main(sys.argv)
