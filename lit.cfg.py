# lit configuration: `lit test/` (pytest runs it too, see test/test_lit.py).
import os
import sys

import lit.formats

config.name = "mjax"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".filecheck.py"]
# Tests live under test/; everything else at the root is not a lit test.
config.excludes = ["Output", "__pycache__", "examples", "docs", "benchmarks", "build",
                   "frontend", "dialect", "passes", "runtime", ".ci", ".git"]

python = sys.executable
config.substitutions.append(("%python", python))
config.substitutions.append(("mjax-opt", f"{python} -m mjax.passes.opt"))
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
for var in ("PATH", "PYTHONPATH", "HOME", "XLA_FLAGS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
