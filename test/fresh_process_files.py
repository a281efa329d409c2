"""The test files that run in a fresh child process (test/test_fresh_process.py), paths
under test/: their tests scan the whole heap (the tracer leak checkers walk every
object's referrers; reference counts and memory kept across calls), which in a worker
that has run a thousand tests costs minutes a test. conftest.py leaves them out of the
workers' collection."""
FRESH_PROCESS_FILES = ["frontend/tracing/test_leak_check.py",
                       "runtime/test_fastpath_refcounts.py",
                       "frontend/arrays/test_eager_rerun.py",
                       "frontend/arrays/test_eager_fast_paths.py"]
