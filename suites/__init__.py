"""The shipped suites, run by name (`ironbench run demo`); installed as `ironbench.shipped.suites`."""
