"""rmm._version: the RMM API level rmmh follows (26.10), then rmmh's own version, for code that
checks rmm.__version__ (RMM reads its VERSION and GIT_COMMIT files; rmmh has no git commit to
record: "", as RMM's outside a built distribution)."""
__version__ = "26.10.0+rmmh.0.1.0"
__git_commit__ = ""

__all__ = ["__git_commit__", "__version__"]
