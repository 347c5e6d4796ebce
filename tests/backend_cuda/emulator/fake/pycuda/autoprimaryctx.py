"""Makes the primary context of the emulated device 0 current."""

from pycuda import driver

driver.init()
device = driver.Device(0)
context = device.retain_primary_context()
context.push()
