"""`import rmm` resolved to rmmh, for code that imports RAPIDS RMM by name (opt-in).

In this process, before anything imports rmm:

    import rmmh
    rmmh.install_as_rmm()
    import rmm, rmm.mr                 # rmm is rmmh, rmm.mr is rmmh.mr: the same module objects

In a program and every Python process it starts (Dask workers, multiprocessing, subprocess):

    python -m rmmh.as_rmm -m pytest ...          # or: script.py ARGS, -c CODE
    eval "$(python -m rmmh.as_rmm --env)"        # for this shell: PYTHONPATH and RMMH_AS_RMM=1

The environment switch is two variables, which `--env` prints: PYTHONPATH holds rmmh's alias
directory (rmmh/_alias, `--path` prints it), whose module `rmm` is found by the first
`import rmm` of any process; it installs the alias when RMMH_AS_RMM=1 (or `force`) and otherwise
steps aside (it loads an installed RAPIDS RMM, or fails as a missing `rmm` would). No `.pth` file
and no `sitecustomize`: nothing runs at interpreter start-up, and a process that never imports rmm
never imports rmmh either.

What the alias is, and what it refuses:
- `sys.modules["rmm"] is rmmh`; `rmm.X.Y` is `rmmh.X.Y`, imported when first asked for (a meta
  path finder first in `sys.meta_path` maps the names), so `isinstance` and `except` work across
  both names. The modules keep their own names: `rmm.__name__ == "rmmh"`, `rmm.mr.__name__ ==
  "rmmh.mr"` (pickles name rmmh's modules, which any process with rmmh can load).
- A module rmmh lacks (RMM's Cython API, `rmm.librmm`) is a ModuleNotFoundError that names both.
- The 2019 API's top-level package, `librmm_cffi` (`from librmm_cffi import librmm`), is given the
  same way: `librmm_cffi.X` is `rmmh.librmm_cffi.X`, and the alias directory holds a module of that
  name too, which installs the alias (RMMH_AS_RMM=1) or steps aside as `rmm`'s does.
- It refuses (ImportError) when a module named `rmm` (or `rmm.*`) that is not rmmh's is already
  imported: the two would be mixed in one process.
- It refuses (ImportError) when RAPIDS RMM is installed, unless forced (`force=True`,
  RMMH_AS_RMM=force): libraries built against RMM (cuDF, ...) need its Cython types, so shadowing
  it is a choice to make explicitly, never one made by accident.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

#: rmmh's alias directory: PYTHONPATH=<this> with RMMH_AS_RMM=1 makes `import rmm` load rmmh.
ALIAS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_alias")
#: the environment variable that arms the alias directory: "1", or "force" to shadow RAPIDS RMM.
ENV_SWITCH = "RMMH_AS_RMM"


class _AliasLoader(importlib.abc.Loader):
    """Hands out rmmh's module under an `rmm` name: the import system files it in sys.modules
    under that name, and the module keeps its own __spec__ (which the import system overwrote).
    Given a name instead of a module (a probe's spec), it imports the module only when used."""

    def __init__(self, module=None, name=None):
        self.module, self.name = module, name
        self.own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        if self.module is None:
            self.module = importlib.import_module(self.name)
            self.own_spec = getattr(self.module, "__spec__", None)
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.own_spec


#: the names the alias gives, and whose modules they are: `rmm` is rmmh, and the 2019 API's
#: top-level package `librmm_cffi` (RMM's README of 2019: `from librmm_cffi import librmm`) is
#: rmmh.librmm_cffi.
_NAMES = (("rmm", "rmmh"), ("librmm_cffi", "rmmh.librmm_cffi"))


def _own_name(fullname):
    """The rmmh module that the alias gives for fullname (`rmm.mr` -> `rmmh.mr`), or None."""
    for alias, own in _NAMES:
        if fullname == alias or fullname.startswith(alias + "."):
            return own + fullname[len(alias):]
    return None


class _RmmAliasFinder(importlib.abc.MetaPathFinder):
    """Finds `rmm` and `rmm.*` as `rmmh` and `rmmh.*` (and `librmm_cffi[.*]` as
    `rmmh.librmm_cffi[.*]`); first in sys.meta_path while installed."""

    def find_spec(self, fullname, path=None, target=None):
        own = _own_name(fullname)
        if own is None:
            return None
        if fullname.startswith("librmm_cffi") and own not in sys.modules and not _importing():
            # a probe of the 2019 API: answered without importing it (its import initializes
            # the 2019 layer, which a check for the module must not do; review 31)
            try:
                found = importlib.util.find_spec(own)
            except (ImportError, ValueError):
                found = None
            return None if found is None else importlib.util.spec_from_loader(fullname, _AliasLoader(name=own))
        try:
            module = importlib.import_module(own)
        except ModuleNotFoundError as e:
            if e.name != own:
                raise
            if not _importing():  # a probe (importlib.util.find_spec): "no such module" is None
                return None
            raise ModuleNotFoundError(
                "No module named %r: rmm is rmmh in this process (rmmh.install_as_rmm()) and "
                "rmmh has no %r (see the README's \"What differs from RMM\")" % (fullname, own),
                name=fullname) from None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module))


def _importing():
    """True when the finder was asked by an import statement (or importlib.import_module), not by
    importlib.util.find_spec: a finder answers None for a module that does not exist, which a probe
    such as ``find_spec("rmm.librmm") is None`` relies on (a red team's find: it raised), while an
    import is better told why rmm has no such module. Read from the caller's frames (the import
    system's _find_and_load_unlocked); where they say nothing, a probe is assumed."""
    try:
        frame = sys._getframe(2)
    except (AttributeError, ValueError):
        return False
    for _ in range(3):
        if frame is None:
            return False
        if frame.f_code.co_name == "_find_and_load_unlocked":
            return True
        frame = frame.f_back
    return False


def _is_alias_dir(entry):
    """True for a sys.path entry that is an rmmh alias directory (this rmmh's or another's)."""
    p = os.path.normcase(os.path.abspath(entry or "."))
    return os.path.basename(p) == "_alias" and os.path.basename(os.path.dirname(p)) == "rmmh"


def find_installed_rmm(name="rmm"):
    """The spec of an installed RAPIDS RMM (a regular `rmm` package or module on sys.path other
    than rmmh's alias directories; name "librmm_cffi": the 2019 package), or None. Imports
    nothing."""
    spec = importlib.machinery.PathFinder.find_spec(
        name, [p for p in sys.path if not _is_alias_dir(p)])
    if spec is None or spec.origin is None or spec.loader is None:
        return None   # none, or a namespace package (a bare folder named rmm): not RMM
    return spec


def _own(name):
    """True when sys.modules[name] is the rmmh module that the alias gives for that name."""
    module = sys.modules.get(name)
    own = _own_name(name)
    return module is not None and own is not None and module is sys.modules.get(own)


def _aliased(name):
    """True for a name the alias gives (`rmm`, `rmm.*`, `librmm_cffi`, `librmm_cffi.*`)."""
    return _own_name(name) is not None


def installed():
    """True when `rmm` is rmmh's alias in this process."""
    return any(isinstance(f, _RmmAliasFinder) for f in sys.meta_path)


def install_as_rmm(force=False):
    """Makes `import rmm` and `import rmm.X` give rmmh and rmmh.X in this process, and
    `import librmm_cffi[.X]` (the 2019 API's package) rmmh.librmm_cffi[.X]; returns rmmh.

    Call it before anything imports rmm. Calling it again does nothing. Fails with ImportError
    iff a module of one of those names (`rmm`, `rmm.*`, `librmm_cffi`, `librmm_cffi.*`) that is
    not rmmh's is already imported, or, unless `force` is true, iff RAPIDS RMM is installed
    (find_installed_rmm(), or find_installed_rmm("librmm_cffi") for the 2019 package). Thread safety: call it
    from one thread, as imports are made. For other processes, see this module's documentation
    (`python -m rmmh.as_rmm`, RMMH_AS_RMM)."""
    return _install(force=force)


def _install(force=False, shim=None):
    import rmmh
    if installed():
        return rmmh
    foreign = sorted(n for n, m in list(sys.modules.items())
                     if _aliased(n) and m is not None and m is not shim and not _own(n))
    if foreign:
        where = getattr(sys.modules[foreign[0]], "__file__", None) or "no file"
        raise ImportError(
            "rmmh.install_as_rmm(): a module named %r (%s) is already imported in this process, "
            "so it cannot be made an alias of rmmh: call install_as_rmm() (or set %s=1) before "
            "anything imports rmm (or librmm_cffi)" % (foreign[0], where, ENV_SWITCH), name="rmm")
    if not force:
        real = find_installed_rmm() or find_installed_rmm("librmm_cffi")
        if real is not None:
            raise ImportError(
                "rmmh.install_as_rmm(): RAPIDS RMM is installed (%s) and the alias would shadow "
                "it; use an environment without it, or pass force=True (%s=force) to shadow it "
                "in this process" % (real.origin, ENV_SWITCH), name="rmm")
    sys.meta_path.insert(0, _RmmAliasFinder())
    sys.modules["rmm"] = rmmh
    return rmmh


def _uninstall():
    """Removes the alias from this process (for tests): the finder and every `rmm` name that is
    one of rmmh's modules. Code that already holds `rmm` keeps rmmh."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RmmAliasFinder)]
    for name in [n for n in sys.modules if _aliased(n)]:
        if _own(name):
            del sys.modules[name]


def alias_env(force=False, environ=None):
    """The environment variables that turn the alias on in new processes: {"PYTHONPATH": ...,
    "RMMH_AS_RMM": "1"} (the alias directory first on the given or current PYTHONPATH)."""
    environ = os.environ if environ is None else environ
    # an empty entry of a non-empty PYTHONPATH (":/x", "/x:", "/x::/y") is the working directory
    # to Python: kept, or a script run by the launcher no longer imports what lies there (a red
    # team's find: they were dropped); an empty PYTHONPATH has no entries
    value = environ.get("PYTHONPATH") or ""
    path = [p for p in (value.split(os.pathsep) if value else [])
            if not (p and _is_alias_dir(p))]
    return {"PYTHONPATH": os.pathsep.join([ALIAS_DIR] + path),
            ENV_SWITCH: "force" if force else "1"}


_USAGE = """usage: python -m rmmh.as_rmm [--force] PYTHON-ARGS...   run Python with `import rmm` = rmmh
       python -m rmmh.as_rmm [--force] --env              print the shell lines that turn it on
       python -m rmmh.as_rmm --path                       print rmmh's alias directory

PYTHON-ARGS is what follows `python`: script.py ARGS, -m module ARGS, -c CODE. The alias holds in
that process and in every Python process it starts (they inherit PYTHONPATH and RMMH_AS_RMM).
--force shadows an installed RAPIDS RMM (refused otherwise)."""


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    force = False
    if args[:1] == ["--force"]:
        force, args = True, args[1:]
        if args[:1] == ["--path"]:  # (--path takes no --force, before or after it)
            print(_USAGE, file=sys.stderr)
            return 2
    if not args or args[0] in ("-h", "--help"):
        print(_USAGE)
        return 0 if args else 2
    if args[0] in ("--path", "--env"):
        # --force may follow --env too; anything else after either is a usage error (a red team's
        # find: "--env --force" printed the lines without force, silently)
        rest = args[1:]
        if rest == ["--force"] and args[0] == "--env":
            force, rest = True, []
        if rest:
            print(_USAGE, file=sys.stderr)
            return 2
    if args[0] == "--path":
        print(ALIAS_DIR)
        return 0
    if args[0] == "--env":
        import shlex
        for k, v in alias_env(force).items():
            print("export %s=%s" % (k, shlex.quote(v)))
        return 0
    env = dict(os.environ)
    env.update(alias_env(force))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable] + args, env)


if __name__ == "__main__":
    sys.exit(main())
