"""pytest plugin of python/tests/rmm_suite.sh (loaded with `-p rmm_suite_select`): leaves out the
files and tests the runner lists, and prints the closing line tests/run.sh reads.

RMM_SUITE_DESELECT holds one entry a line, "ID REASON...": ID is a test file (not collected at
all, so an import error in it does not count), or a test's node id, which leaves out that test
with every parameter (`file::test`, `file::Class::test`) or one parametrization (`file::test[id]`).
Matching is exact at name boundaries, unlike --deselect's prefixes (test_x would also take
test_x_y). The tests stay as RMM wrote them; nothing else changes.

The last line printed is "N passed, N failed[, N skipped]" (errors count as failed).
"""
import os
import sys

_entries = []        # (id, reason)
_used = {}          # id -> how many tests it left out (files: -1, not collected)
_counts = {}


def _load():
    if _entries:
        return
    for line in (os.environ.get("RMM_SUITE_DESELECT") or "").splitlines():
        parts = line.split(None, 1)
        if parts and not parts[0].startswith("#"):
            _entries.append((parts[0], parts[1].strip() if len(parts) > 1 else ""))


def _files():
    return {e for e, _ in _entries if "::" not in e}


def pytest_configure(config):
    _load()


def pytest_ignore_collect(collection_path, config):
    if collection_path.name in _files():
        _used[collection_path.name] = -1
        return True
    return None


def _matches(nodeid, entry):
    return nodeid == entry or nodeid.startswith(entry + "::") or nodeid.startswith(entry + "[")


def pytest_collection_modifyitems(config, items):
    tests = [e for e, _ in _entries if "::" in e]
    keep, drop = [], []
    for item in items:
        hit = next((e for e in tests if _matches(item.nodeid, e)), None)
        if hit is None:
            keep.append(item)
        else:
            _used[hit] = _used.get(hit, 0) + 1
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    if not _entries:
        tr.write_line("rmm_suite: every test runs (nothing left out)")
    else:
        tr.write_line("rmm_suite: left out (python/tests/rmm_suite.sh lists them):")
        for e, why in _entries:
            n = _used.get(e, 0)
            if n < 0:
                what = "file not collected"
            elif n == 0 and e.split("::")[0] in _files():
                what = "its file is not collected"
            else:
                what = "%d test%s" % (n, "" if n == 1 else "s")
            tr.write_line("  %s: %s [%s]" % (e, why, what))
    ignored = _files()
    stale = [e for e, _ in _entries if e not in _used and e.split("::")[0] not in ignored]
    for e in stale:
        tr.write_line("rmm_suite: the entry %r matched no test (remove it?)" % e)


def pytest_sessionfinish(session, exitstatus):
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        s = tr.stats
        _counts.update(passed=len(s.get("passed", [])),
                       failed=len(s.get("failed", [])) + len(s.get("error", [])),
                       skipped=len(s.get("skipped", [])))


def pytest_unconfigure(config):
    if _counts:
        line = "%d passed, %d failed" % (_counts["passed"], _counts["failed"])
        if _counts["skipped"]:
            line += ", %d skipped" % _counts["skipped"]
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
