"""What the fence's watch costs per invocation (not collected by pytest).
Run: python tests/perf/bench_watch.py [--namespaces 400]

Each fenced invocation with a network namespace gets a watch (sandbox/watch.py): the machine's
name servers put on the namespace's loopback, a filtered packet socket opened there, and read
once the program has ended. Here, on one thread, namespaces are made in turn with the watch and
without it (the name servers and the socket left out), alternated one by one so both meet the
same machine; the cost per invocation is the difference of the medians, beside the namespace's
own cost, and a refused connection and a name look-up are read back to show the watch sees them.
"""

import argparse
import os
import socket
import statistics
import time
from unittest import mock

from ironbench.sandbox import network, watch


def _made(with_watch: bool) -> float:
    """Seconds to make a namespace (with or without its watch), read its watch and close it."""
    started = time.perf_counter()
    if with_watch:
        net, seen = network.made_here()
    else:
        with (
            mock.patch.object(watch, "nameservers", return_value=()),
            mock.patch.object(watch, "open_watch", side_effect=OSError("no watch")),
        ):
            net, seen = network.made_here()
    if seen is not None:
        watch.drain(seen, watch.Sightings())
    os.close(net)
    return time.perf_counter() - started


def _sees() -> list[str]:
    """What a watch saw of a refused connection to 127.0.0.1:9 made inside its namespace."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    net, seen = network.fresh_namespace(own)
    assert seen is not None
    try:
        network._setns(net)
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=1).close()
        except OSError:
            pass
    finally:
        network._setns(own)
        os.close(own)
    found = watch.Sightings()
    watch.drain(seen, found)
    os.close(net)
    return [f"{s.kind} {s.what}" for s in found.items()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespaces", type=int, default=400)
    n = parser.parse_args().namespaces
    _made(True), _made(False)  # warm
    on, off = [], []
    for _ in range(n):
        on.append(_made(True))
        off.append(_made(False))
    a, b = statistics.median(on) * 1000, statistics.median(off) * 1000
    print(f"namespaces: {n} each, alternated")
    print(f"with the watch:    median {a:.3f} ms (p90 {statistics.quantiles(on, n=10)[-1] * 1000:.3f})")
    print(f"without the watch: median {b:.3f} ms (p90 {statistics.quantiles(off, n=10)[-1] * 1000:.3f})")
    print(f"the watch adds {a - b:.3f} ms per invocation (ratio {a / b:.2f})")
    print(f"a refused connect, as the watch saw it: {_sees()}")


if __name__ == "__main__":
    main()
