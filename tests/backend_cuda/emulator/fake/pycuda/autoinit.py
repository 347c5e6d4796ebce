"""Makes the emulated device's context current (there is only one)."""

from pycuda import driver

driver.init()
device = driver.Device(0)
context = driver.Context()
