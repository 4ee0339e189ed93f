"""rmmh's alias directory's module `rmm` (see rmmh/as_rmm.py; `librmm_cffi` beside it): with this directory on PYTHONPATH
(`python -m rmmh.as_rmm --path`), the first `import rmm` of a process lands here.

RMMH_AS_RMM=1: installs rmmh.install_as_rmm() and so becomes rmmh (sys.modules["rmm"] is rmmh).
RMMH_AS_RMM=force: the same, even where RAPIDS RMM is installed.
Unset (or anything else): steps aside, loading RAPIDS RMM from the rest of sys.path when it is
installed and failing as a missing module otherwise: the directory alone never shadows RMM.
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
        "rmm", [p for p in sys.path if not _is_alias_dir(p)])
    if spec is None or spec.origin is None or spec.loader is None:
        raise ModuleNotFoundError(
            "No module named 'rmm' (rmmh's alias directory %s is on sys.path, but RMMH_AS_RMM "
            "is not 1: set it to make rmm an alias of rmmh)"
            % os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name="rmm")
    module = importlib.util.module_from_spec(spec)
    sys.modules["rmm"] = module          # the import statement returns what is filed here
    spec.loader.exec_module(module)


def _activate():
    mode = os.environ.get("RMMH_AS_RMM", "").strip().lower()
    if mode not in ("1", "force"):
        return _step_aside()
    try:
        import rmmh.as_rmm
    except ModuleNotFoundError as e:
        if e.name != "rmmh":
            raise
        # rmmh itself is not on sys.path (PYTHONPATH holds only this directory): use the rmmh
        # this directory belongs to
        sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.abspath(__file__))))))
        import rmmh.as_rmm
    rmmh.as_rmm._install(force=(mode == "force"), shim=sys.modules.get(__name__))


_activate()
