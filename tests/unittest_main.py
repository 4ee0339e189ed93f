"""The closing line every test program here prints: runs a module's unittest cases and prints
`N passed, N failed` (exit status 1 if any failed). Shared by tests/test_plot.py and tests/test_ab.py."""
import sys
import unittest


def main(module_name):
    verbosity = 2 if "-v" in sys.argv else 1
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=verbosity).run(
        unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module_name]))
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
