"""Targets: the systems under test, invoked as black boxes."""
