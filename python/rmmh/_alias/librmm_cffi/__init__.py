"""rmmh's alias directory's second module (see rmmh/as_rmm.py): the 2019 API's top-level package.
RMM's README of 2019 imports it as `from librmm_cffi import librmm`; with this directory on
PYTHONPATH and RMMH_AS_RMM=1 (or force) the first `import librmm_cffi` of a process installs the
alias (as `import rmm` would) and gives rmmh.librmm_cffi. Otherwise it steps aside: another
`librmm_cffi` on sys.path is loaded, else the import fails as a missing module would, saying why.
"""
import os
import sys


def _is_alias_dir(entry):
    p = os.path.normcase(os.path.abspath(entry or "."))
    return os.path.basename(p) == "_alias" and os.path.basename(os.path.dirname(p)) == "rmmh"


def _step_aside():
    import importlib.machinery
    import importlib.util
    spec = importlib.machinery.PathFinder.find_spec(
        "librmm_cffi", [p for p in sys.path if not _is_alias_dir(p)])
    if spec is None or spec.origin is None or spec.loader is None:
        raise ModuleNotFoundError(
            "No module named 'librmm_cffi' (rmmh's alias directory %s is on sys.path, but "
            "RMMH_AS_RMM is not 1: set it to make librmm_cffi rmmh's 2019 API, "
            "rmmh.librmm_cffi)" % os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            name="librmm_cffi")
    module = importlib.util.module_from_spec(spec)
    sys.modules["librmm_cffi"] = module
    spec.loader.exec_module(module)


def _activate():
    import importlib
    mode = os.environ.get("RMMH_AS_RMM", "").strip().lower()
    if mode not in ("1", "force"):
        return _step_aside()
    try:
        import rmmh.as_rmm
    except ModuleNotFoundError as e:
        if e.name != "rmmh":
            raise
        sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.abspath(__file__))))))
        import rmmh.as_rmm
    rmmh.as_rmm._install(force=(mode == "force"), shim=sys.modules.get(__name__))
    # the import statement returns what is filed here
    sys.modules["librmm_cffi"] = importlib.import_module("rmmh.librmm_cffi")


_activate()
