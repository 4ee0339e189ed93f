"""rmm.pylibrmm.device_buffer: DeviceBuffer and the copy functions."""
from .._device_buffer import (  # noqa: F401
    DeviceBuffer,
    copy_device_to_ptr,
    copy_host_to_ptr,
    copy_ptr_to_host,
    to_device,
)
