"""The README's Python example runs (on the backend under test)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import HAVE_GPU, HOST

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def test_readme_example():
    if not os.path.exists(README):
        pytest.skip("README.md is not next to python/ (testing an installed copy elsewhere)")
    if not (HOST or HAVE_GPU):
        pytest.skip("no usable GPU")
    text = open(README).read()
    m = re.search(r"<!-- rmmh-example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "README.md lost its <!-- rmmh-example --> block"
    import rmmh
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(rmmh.__file__)))
    r = subprocess.run([sys.executable, "-c", m.group(1)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "40 [0. 1. 2." in r.stdout and "Statistics(current_bytes=1000," in r.stdout
