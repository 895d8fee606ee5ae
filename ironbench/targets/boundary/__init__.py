"""A check's boundary: the brick's code in an untrusted host process, the check's own code in a
trusted one, plain data (or handles) between them, one verdict decided from what each found.

protocol.py (every channel's framing, the host's operations, every message's shape) and
codec.py (the values) are loaded by both sides: host.py, the brick's side, loads them by path.
remote.py (the session and handles), values.py (value types made from their data), imports.py
(what the check's names resolve to), judge.py and zygote.py are the trusted side; pool.py is the
harness's side; verdict.py decides; launch.py is the seam a fence wraps; tamper.py gathers
evidence of gaming.
"""
