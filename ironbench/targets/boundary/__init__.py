"""A check's boundary: the brick's code in an untrusted host process, the check's own code in a
trusted one, plain data (or handles) between them.

codec.py (the wire format) and host.py (the brick's side) run in the host, loaded by path;
remote.py, judge.py and zygote.py are the trusted side; pool.py is the harness's side; launch.py
is the seam a fence wraps; tamper.py gathers evidence of gaming.
"""
