import os

# Eight CPU devices for multi-device tests; must be set before jaxlib makes a client.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
