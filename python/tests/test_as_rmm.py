"""The opt-in `rmm` alias (rmmh/as_rmm.py): rmmh.install_as_rmm() in this process, and the
environment switch (rmmh's alias directory on PYTHONPATH with RMMH_AS_RMM=1, as
`python -m rmmh.as_rmm` sets it) in child processes; what it refuses, and that nothing turns it on
unasked. A fake RAPIDS RMM (a folder with rmm/__init__.py) stands in for an installed one."""
import multiprocessing
import os
import subprocess
import importlib
import importlib.util
import sys
import types

import pytest

import rmmh
from conftest import child_env
from rmmh import as_rmm


@pytest.fixture
def alias():
    """install_as_rmm() for one test; removed after, so the other tests never see `rmm`."""
    assert "rmm" not in sys.modules, "something imported rmm before this test"
    yield rmmh.install_as_rmm(force=as_rmm.find_installed_rmm() is not None)
    as_rmm._uninstall()
    assert "rmm" not in sys.modules and not as_rmm.installed()


@pytest.fixture
def fake_rmm(tmp_path):
    """A folder holding a package named rmm that is not rmmh (as an installed RMM would be)."""
    (tmp_path / "rmm").mkdir()
    (tmp_path / "rmm" / "__init__.py").write_text("FAKE = True\n")
    (tmp_path / "rmm" / "mr.py").write_text("FAKE = True\n")
    return str(tmp_path)


def child(code, switch=None, path=(), cwd=None, launcher=False):
    """Runs code in a new interpreter with the rmmh under test on PYTHONPATH, `path` entries
    before it, and RMMH_AS_RMM set to `switch` (None: unset). Returns (exit status, output)."""
    env = child_env()
    env.pop(as_rmm.ENV_SWITCH, None)
    env["PYTHONPATH"] = os.pathsep.join(list(path) + [env["PYTHONPATH"]])
    if switch is not None:
        env[as_rmm.ENV_SWITCH] = switch
    cmd = [sys.executable] + (["-m", "rmmh.as_rmm"] if launcher else []) + ["-c", code]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=cwd)
    return r.returncode, r.stdout + r.stderr


def test_in_process(alias):
    import rmm
    import rmm.mr
    import rmm.pylibrmm.stream
    import rmm.statistics
    from rmm.pylibrmm.stream import Stream
    assert rmm is rmmh and alias is rmmh
    assert rmm.mr is rmmh.mr and sys.modules["rmm.mr"] is rmmh.mr
    assert rmm.pylibrmm.stream is rmmh.pylibrmm.stream and Stream is rmmh.Stream
    assert rmm.statistics is rmmh.statistics
    # the modules keep their own names and specs
    assert rmm.__name__ == "rmmh" and rmm.mr.__name__ == "rmmh.mr"
    assert rmm.mr.__spec__.name == "rmmh.mr"
    # the same classes under both names
    buf = rmm.DeviceBuffer(size=10)
    assert isinstance(buf, rmmh.DeviceBuffer)
    assert isinstance(rmm.mr.get_current_device_resource(), rmmh.mr.DeviceMemoryResource)
    assert rmm.RMMError is rmmh.RMMError and rmm.mr.PoolMemoryResource is rmmh.mr.PoolMemoryResource
    assert rmmh.install_as_rmm() is rmmh   # again: nothing changes
    assert sum(isinstance(f, as_rmm._RmmAliasFinder) for f in sys.meta_path) == 1


def test_in_process_lazy_submodules(alias):
    # submodules rmmh loads on first use are loaded the same way under the alias
    import rmm.allocators.cupy
    import rmm._cuda.gpu
    assert rmm.allocators.cupy is rmmh.allocators.cupy
    assert sys.modules["rmm.allocators"] is sys.modules["rmmh.allocators"]
    assert rmm._cuda.gpu is rmmh._cuda.gpu


def test_missing_module_names_both(alias):
    with pytest.raises(ModuleNotFoundError, match=r"'rmm\.librmm'.*'rmmh\.librmm'") as e:
        import rmm.librmm  # noqa: F401
    assert e.value.name == "rmm.librmm"
    with pytest.raises(ModuleNotFoundError, match=r"'rmm\.librmm'.*'rmmh\.librmm'"):
        importlib.import_module("rmm.librmm")


def test_a_probe_for_a_missing_module_answers_none(alias):
    """importlib.util.find_spec answers None for a module that does not exist (a finder's
    contract), which feature checks rely on; an import says why (above). A red team's find: the
    probe raised ModuleNotFoundError."""
    assert importlib.util.find_spec("rmm.librmm") is None
    assert importlib.util.find_spec("rmm.nope") is None
    assert importlib.util.find_spec("rmm.mr") is not None


def test_the_2019_package_name(alias):
    """RMM's README of 2019 imports `from librmm_cffi import librmm`: under the alias that is
    rmmh's 2019 API (session 31: it was a ModuleNotFoundError, and the README did not say so)."""
    from librmm_cffi import librmm, librmm_config
    import librmm_cffi
    import librmm_cffi.librmm_config as config
    import rmmh.librmm_cffi
    assert librmm_cffi is rmmh.librmm_cffi and librmm is rmmh.librmm_cffi.librmm
    assert librmm_config is config is rmmh.librmm_cffi.librmm_config
    p = librmm.rmmAlloc(256)
    librmm.rmmFree(p)
    with pytest.raises(ModuleNotFoundError, match=r"'librmm_cffi\.nope'.*'rmmh\.librmm_cffi\.nope'"):
        import librmm_cffi.nope  # noqa: F401
    assert importlib.util.find_spec("librmm_cffi.nope") is None


def test_the_2019_package_name_probe_and_installed(tmp_path):
    """A probe (importlib.util.find_spec) of librmm_cffi under the alias answers without importing
    it (its import initializes the 2019 layer); an installed librmm_cffi is not shadowed unless
    forced, as RAPIDS RMM is not (review 31)."""
    rc, out = child("import sys, importlib.util, rmmh; rmmh.install_as_rmm(force=%r); "
                    "s = importlib.util.find_spec('librmm_cffi'); "
                    "assert s is not None and 'rmmh.librmm_cffi' not in sys.modules, s; "
                    "assert importlib.util.find_spec('librmm_cffi.nope') is None; "  # (imports the parent, as Python does)
                    "from librmm_cffi import librmm; assert librmm is rmmh.librmm_cffi.librmm; print('ok')"
                    % (as_rmm.find_installed_rmm() is not None))
    assert rc == 0 and out.strip() == "ok", out
    (tmp_path / "librmm_cffi").mkdir()
    (tmp_path / "librmm_cffi" / "__init__.py").write_text("REAL = True\n")
    rc, out = child("import rmmh; rmmh.install_as_rmm()", path=[str(tmp_path)])
    assert rc != 0 and "RAPIDS RMM is installed" in out and "librmm_cffi" in out, out
    rc, out = child("import rmmh; rmmh.install_as_rmm(force=True); import librmm_cffi; "
                    "print(librmm_cffi.__name__)", path=[str(tmp_path)])
    assert rc == 0 and out.strip() == "rmmh.librmm_cffi", out


def test_the_2019_package_name_without_the_alias():
    rc, out = child("import librmm_cffi")
    assert rc != 0 and "No module named 'librmm_cffi'" in out, out
    # the alias directory without RMMH_AS_RMM=1 steps aside, saying why
    rc, out = child("import librmm_cffi", path=[as_rmm.ALIAS_DIR])
    assert rc != 0 and "RMMH_AS_RMM is not 1" in out, out
    # with it, the first `import librmm_cffi` of a process installs the alias
    force = as_rmm.find_installed_rmm() is not None
    rc, out = child("from librmm_cffi import librmm; import sys, rmmh, rmm; "
                    "assert librmm is rmmh.librmm_cffi.librmm and rmm is rmmh; "
                    "assert sys.modules['librmm_cffi'] is rmmh.librmm_cffi; "
                    "librmm.rmmFree(librmm.rmmAlloc(256)); print('ok')",
                    switch="force" if force else "1", path=[as_rmm.ALIAS_DIR])
    assert rc == 0 and out.strip() == "ok", out


@pytest.mark.parametrize("name", ["rmm", "rmm.mr"])
def test_refuses_when_another_rmm_is_imported(name):
    sys.modules[name] = types.ModuleType(name)
    try:
        with pytest.raises(ImportError, match=r"module named '%s'.*already imported" % name):
            rmmh.install_as_rmm(force=True)
        assert not as_rmm.installed()
        assert sys.modules[name].__name__ == name   # left as it was
    finally:
        del sys.modules[name]


def test_refuses_to_shadow_installed_rmm_unless_forced(fake_rmm, monkeypatch):
    monkeypatch.syspath_prepend(fake_rmm)
    assert as_rmm.find_installed_rmm().origin.startswith(fake_rmm)
    with pytest.raises(ImportError, match="RAPIDS RMM is installed.*force"):
        rmmh.install_as_rmm()
    assert not as_rmm.installed() and "rmm" not in sys.modules
    try:
        assert rmmh.install_as_rmm(force=True) is rmmh
        import rmm
        import rmm.mr
        assert rmm is rmmh and rmm.mr is rmmh.mr
    finally:
        as_rmm._uninstall()


def test_not_active_unless_asked(fake_rmm):
    # importing rmmh alone installs nothing and imports no rmm
    rc, out = child("import sys, rmmh; assert 'rmm' not in sys.modules; "
                    "assert 'rmmh.as_rmm' not in sys.modules; print('ok')")
    assert rc == 0 and out.strip() == "ok", out
    # the alias directory without RMMH_AS_RMM=1 steps aside: a missing module that says why ...
    if as_rmm.find_installed_rmm() is None:
        rc, out = child("import rmm", path=[as_rmm.ALIAS_DIR])
        assert rc != 0 and "RMMH_AS_RMM is not 1" in out, out
    # ... or the installed RMM, never rmmh
    rc, out = child("import rmm, rmm.mr; print(rmm.FAKE, rmm.mr.FAKE)",
                    path=[as_rmm.ALIAS_DIR, fake_rmm], switch="0")
    assert rc == 0 and out.strip() == "True True", out


def test_env_switch_in_subprocess():
    code = ("import sys, subprocess, rmm, rmm.mr, rmmh; assert rmm is rmmh and rmm.mr is rmmh.mr; "
            "subprocess.run([sys.executable, '-c', 'import rmm.mr, rmmh; "
            "assert rmm.mr is rmmh.mr; print(\"child\", rmm.__name__)'], check=True); print('ok')")
    env = as_rmm.alias_env(force=as_rmm.find_installed_rmm() is not None,
                           environ={"PYTHONPATH": child_env()["PYTHONPATH"]})
    rc, out = child(code, switch=env[as_rmm.ENV_SWITCH], path=[as_rmm.ALIAS_DIR])
    assert rc == 0 and out.split() == ["child", "rmmh", "ok"], out
    # `python -m rmmh.as_rmm` sets the same switch for the program and its children
    if as_rmm.find_installed_rmm() is None:
        rc, out = child(code, launcher=True)
        assert rc == 0 and out.split() == ["child", "rmmh", "ok"], out


def test_env_switch_refuses_installed_rmm_unless_forced(fake_rmm):
    path = [as_rmm.ALIAS_DIR, fake_rmm]
    rc, out = child("import rmm", switch="1", path=path)
    assert rc != 0 and "RAPIDS RMM is installed" in out and "RMMH_AS_RMM=force" in out, out
    rc, out = child("import rmm, rmmh; assert rmm is rmmh; print('ok')", switch="force", path=path)
    assert rc == 0 and out.strip() == "ok", out


def test_env_switch_finds_its_own_rmmh(tmp_path):
    # PYTHONPATH holding only the alias directory: the shim loads the rmmh it belongs to
    env = child_env()
    env.update(PYTHONPATH=as_rmm.ALIAS_DIR, RMMH_AS_RMM="force")
    r = subprocess.run([sys.executable, "-c", "import rmm.mr, rmmh; assert rmm.mr is rmmh.mr; "
                        "print(rmmh.__file__)"], env=env, capture_output=True, text=True,
                       timeout=120, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert os.path.dirname(r.stdout.strip()) == os.path.dirname(rmmh.__file__)


def _spawned(q):
    import rmm.mr
    import rmmh
    q.put((rmm.mr is rmmh.mr, os.getpid()))


def test_env_switch_reaches_spawned_workers(monkeypatch):
    # multiprocessing's spawn (as Dask's nannies start workers): a fresh interpreter with the
    # parent's environment and sys.path, here those of a parent started with the switch that
    # has not imported rmm itself
    env = as_rmm.alias_env(force=as_rmm.find_installed_rmm() is not None)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.syspath_prepend(as_rmm.ALIAS_DIR)
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_spawned, args=(q,))
    p.start()
    p.join(120)
    same, pid = q.get(timeout=1)
    assert same and pid != os.getpid() and p.exitcode == 0
    assert "rmm" not in sys.modules


def test_launcher_env_and_path():
    out = subprocess.run([sys.executable, "-m", "rmmh.as_rmm", "--env"], env=child_env(),
                         capture_output=True, text=True, timeout=120).stdout
    assert "export RMMH_AS_RMM=1" in out and ("export PYTHONPATH=" + as_rmm.ALIAS_DIR) in out, out
    out = subprocess.run([sys.executable, "-m", "rmmh.as_rmm", "--path"], env=child_env(),
                         capture_output=True, text=True, timeout=120).stdout
    assert out.strip() == as_rmm.ALIAS_DIR


def test_alias_env_keeps_the_working_directory_entry(tmp_path):
    # An empty PYTHONPATH entry is the working directory to Python; the launcher's environment
    # keeps it, so a script run through `python -m rmmh.as_rmm` imports what it imports without
    # it (a red team's find: the entry was dropped and the import failed)
    sep = os.pathsep
    assert as_rmm.alias_env(environ={"PYTHONPATH": sep + "/x"})["PYTHONPATH"] == \
        sep.join([as_rmm.ALIAS_DIR, "", "/x"])
    assert as_rmm.alias_env(environ={"PYTHONPATH": "/x" + sep + sep + as_rmm.ALIAS_DIR}) == {
        "PYTHONPATH": sep.join([as_rmm.ALIAS_DIR, "/x", ""]), as_rmm.ENV_SWITCH: "1"}
    assert as_rmm.alias_env(environ={"PYTHONPATH": ""})["PYTHONPATH"] == as_rmm.ALIAS_DIR
    assert as_rmm.alias_env(environ={})["PYTHONPATH"] == as_rmm.ALIAS_DIR
    if as_rmm.find_installed_rmm() is not None:
        return  # the launcher below would refuse to shadow it
    (tmp_path / "beside.py").write_text("VALUE = 7\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "script.py").write_text("import beside, rmm, rmmh\n"
                                                "assert rmm is rmmh\nprint(beside.VALUE)\n")
    env = child_env()
    env["PYTHONPATH"] = sep + env["PYTHONPATH"]  # "" first: the working directory
    env.pop(as_rmm.ENV_SWITCH, None)
    for launcher in ([], ["-m", "rmmh.as_rmm"]):
        r = subprocess.run([sys.executable] + launcher + [os.path.join("sub", "script.py")],
                           env=env, capture_output=True, text=True, timeout=120,
                           cwd=str(tmp_path))
        if not launcher:
            assert r.returncode != 0  # plain Python: the script needs the alias for `rmm`
            assert "No module named 'rmm'" in r.stderr, r.stderr
        else:
            assert r.returncode == 0 and r.stdout.strip() == "7", r.stdout + r.stderr


def test_launcher_options_in_either_order(capsys):
    # "--env --force" printed the lines without force; options after --env or --path that mean
    # nothing there are a usage error, not ignored (a red team's find)
    for argv in (["--force", "--env"], ["--env", "--force"]):
        assert as_rmm.main(argv) == 0
        assert "%s=force" % as_rmm.ENV_SWITCH in capsys.readouterr().out, argv
    assert as_rmm.main(["--env"]) == 0
    assert "%s=1" % as_rmm.ENV_SWITCH in capsys.readouterr().out
    for argv in (["--env", "x"], ["--path", "--force"], ["--force", "--path"], ["--env", "--force", "x"]):
        assert as_rmm.main(argv) == 2, argv
        assert "usage" in capsys.readouterr().err
