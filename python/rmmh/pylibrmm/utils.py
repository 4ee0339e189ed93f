"""rmm.pylibrmm.utils: RMM's module holds one function, as_stream, which is Cython-level only
(a cdef function: no Python name), so this module, as RMM's seen from Python, has none. rmmh's
stream argument conversion is rmmh._stream.as_stream."""
