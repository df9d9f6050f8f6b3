"""Runs the exporter tests (python -m unittest) with exit status 77 when torch is not importable,
so that ctest reports them as skipped (SKIP_RETURN_CODE 77), never as passed.
    run_tests.py [test_export.Class.test ...]"""
import importlib.util
import os
import sys
import unittest

missing = [m for m in ("torch", "torchvision") if importlib.util.find_spec(m) is None]  # without importing: fast
if missing:
    print(f"DEVPLACE-SKIPPED: {' and '.join(missing)} not importable by {sys.executable} (Debian: apt-get install "
          f"python3-torch python3-torchvision, or scripts/install-deps --python)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
names = sys.argv[1:] or ["test_export"]
suite = unittest.defaultTestLoader.loadTestsFromNames(names)
result = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
