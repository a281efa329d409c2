# lit configuration: `lit test/` (pytest runs it too, see test/test_lit.py).
import os
import sys

import lit.formats

config.name = "mjax"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".filecheck.py"]
# Tests live under test/. Excludes match directory names at any depth, so the source
# folders (frontend/, dialect/, passes/, runtime/, which hold no lit files) are not
# listed: test/dialect etc. would be skipped too.
config.excludes = ["Output", "__pycache__", "examples", "docs", "benchmarks", "build",
                   ".ci", ".git"]

python = sys.executable
config.substitutions.append(("%python", python))
config.substitutions.append(("mjax-opt", f"{python} -m mjax.passes.opt"))
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
for var in ("PATH", "PYTHONPATH", "HOME", "XLA_FLAGS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
