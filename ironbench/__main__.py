"""`python -m ironbench`: the command line."""

from ironbench.cli.main import main

main()
