"""python/tests/rmm_suite.sh, the runner of RAPIDS RMM's own tests, on small test folders made
here: its closing line and exit status (a failure, no test at all), that `import rmm` is rmmh in
the tests it runs, and its plugin's exact matching of what it leaves out. Skipped, with the
runner's reason, where the runner cannot run (numba-cuda or cuda-bindings missing)."""
import importlib.util
import os
import subprocess
import sys

import pytest

import rmmh
from conftest import child_env

pytestmark = pytest.mark.backend_independent

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "rmm_suite.sh")


def runner(folder, *options, **env):
    e = child_env(PYTHON=sys.executable, RMMH_BACKEND=rmmh.BACKEND, **env)
    e.pop("OUT", None)
    return subprocess.run(["bash", RUNNER] + list(options) + [str(folder)], env=e,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def folder(tmp_path):
    r = runner(tmp_path, "--check")
    if r.returncode != 0:
        pytest.skip(r.stdout.strip() or r.stderr.strip())
    return tmp_path


def test_closing_line_and_status(folder):
    (folder / "test_a.py").write_text(
        "import rmm, rmm.mr, rmmh\n"
        "def test_alias():\n    assert rmm is rmmh and rmm.mr is rmmh.mr\n"
        "def test_fails():\n    assert False\n")
    r = runner(folder, RMM_SUITE_ALL="1")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "1 passed, 1 failed", r.stdout
    (folder / "test_a.py").write_text("import rmm\ndef test_alias():\n    assert rmm.__name__ == 'rmmh'\n")
    r = runner(folder, RMM_SUITE_ALL="1")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "1 passed, 0 failed", r.stdout


def test_no_test_is_no_failure(folder):
    r = runner(folder, RMM_SUITE_ALL="1")   # pytest's exit status 5
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "0 passed, 0 failed", r.stdout


def test_import_error_counts_as_failed(folder):
    (folder / "test_b.py").write_text("import rmm.no_such_module\n")
    (folder / "test_c.py").write_text("def test_ok():\n    pass\n")
    r = runner(folder, RMM_SUITE_ALL="1")
    assert r.returncode == 1 and r.stdout.splitlines()[-1] == "1 passed, 1 failed", r.stdout


def test_plugin_matches_at_name_boundaries():
    spec = importlib.util.spec_from_file_location(
        "rmm_suite_select", os.path.join(HERE, "rmm_suite", "rmm_suite_select.py"))
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    m = plugin._matches
    assert m("t.py::test_x", "t.py::test_x")
    assert m("t.py::test_x[a-b]", "t.py::test_x")
    assert m("t.py::C::test_x[1]", "t.py::C")
    assert m("t.py::test_x[a-b]", "t.py::test_x[a-b]")
    assert not m("t.py::test_x_y", "t.py::test_x")          # --deselect would take this one
    assert not m("t.py::test_x[a-c]", "t.py::test_x[a-b]")
