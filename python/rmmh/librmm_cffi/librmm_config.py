"""Options of the 2019 API (RMM's librmm_cffi.librmm_config), read by librmm.initialize().

    from rmmh.librmm_cffi import librmm_config as rmm_cfg
    rmm_cfg.use_pool_allocator = True
    rmm_cfg.initial_pool_size = 2 << 30   # 2 GiB; 0 means half of the device's memory
    rmm_cfg.enable_logging = True         # librmm.csv_log() then returns the events
"""

#: A pool over the base allocation (False: plain cudaMalloc).
use_pool_allocator = False

#: cudaMallocManaged as the base allocation (combines with the pool).
use_managed_memory = False

#: With the pool: its initial size in bytes; 0 is half of the device's total memory.
initial_pool_size = 0

#: Record every allocation and free (librmm.csv_log()); costs time.
enable_logging = False
