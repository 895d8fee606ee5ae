"""`python -m ironbench.gateway`: the gateway process (see process.py), started by its coordinator."""

from ironbench.gateway.process import main
from ironbench.sandbox import not_dumpable

not_dumpable()  # it holds the API keys: a target (below the full fence) cannot read its environment
main()
