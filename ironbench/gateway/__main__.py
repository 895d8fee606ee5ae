"""`python -m ironbench.gateway`: the gateway process (see process.py), started by its coordinator."""

from ironbench.gateway.process import main

main()
