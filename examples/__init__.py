"""Examples `ironbench init` copies to a folder of yours; installed as `ironbench.shipped.examples`."""
