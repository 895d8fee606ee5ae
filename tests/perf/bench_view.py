"""`ironbench view` benchmark (not collected by pytest). Run: python tests/perf/bench_view.py

(a) Pages served: a store of 1,000 runs, one of them a 10,000-invocation mixed run (the
    synthetic run of bench_report.py), the rest small baseline runs; the real viewer in a
    subprocess, each page asked over HTTP: its first answer (the run's report rendered in
    the viewer's worker) and the median of the next five. Goal: <= 1 s each.
(b) A viewer's cost to a run, and update latency: `ironbench run` of 500 no-op invocations
    (bench_core.py's target) alone, with the viewer and 20 page clients over HTTP (each
    loads the run's page, follows its server-sent events and asks for the report's sections
    again as the page's script does), and with the viewer and 20 pages in headless Chromium;
    interleaved, medians of --repeats. Wall time and the run's own CPU time (targets
    included) are compared with the run alone: goal <= 1.05. Update latency: from the
    event's append (its timestamp) to its arrival on a stream, and to its line on a
    Chromium page (the page's clock), median and p95 over every listed event of the runs.

Every process runs on this machine's cores: Chromium's own work on 20 pages competes
with the run as much as the viewer's, and is reported apart (CPU seconds).
"""

import argparse
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ironbench.core.events import RunFinished, RunStarted
from ironbench.projections.readmodel import ReadModel
from ironbench.store import open_store
from ironbench.suite.models import parse_suite
from tests.perf.bench_core import NOOP
from tests.perf.bench_report import _play, _Recorder, build_mixed_run, mixed_suite
from tests.report.chromium import Chromium, chromium_path
from tests.view.served import Served

NOOP_CASES, NOOP_RUNS = 50, 10  # 500 invocations, every case spends all its runs
LISTED = (
    "SELECT seq, timestamp_utc FROM events WHERE run_id = ? AND type IN ('run_started', 'invocation_completed', "
    "'decision_taken', 'run_finished') ORDER BY seq"
)


def _utc(stamp: str) -> float:
    from datetime import UTC, datetime

    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- (a) pages served ------------------------------------------------------------------------


def build_small_runs(store_path: Path, count: int, invocations: int = 10) -> list[str]:
    """`count` finished baseline runs of about `invocations` invocations each."""
    suite = mixed_suite(baseline_cases=2, adversarial_cases=0, stress_cases=0)
    suite = parse_suite({**suite.to_dict(), "suite_id": "perf_small"}, "perf_small.yaml")
    run_ids = []
    with open_store(store_path, [ReadModel()]) as store:
        for i in range(count):
            run_id = f"run_perf_small_{i:04d}"
            recorder = _Recorder(store, run_id)
            recorder.add(
                "run",
                RunStarted(
                    suite_id=suite.suite_id,
                    mode=suite.mode,
                    suite=suite.to_dict(),
                    target_argv=["true", "{instruction}"],
                    ironclad_version="synthetic",
                    harness_version="bench",
                    python_version=sys.version.split()[0],
                    platform=sys.platform,
                ),
            )
            _play(suite, recorder, i, invocations)
            recorder.add("run", RunFinished(invocations=recorder.invocations, successes=0), f"finished:{run_id}")
            recorder.flush()
            run_ids.append(run_id)
    return run_ids


def _pending(page: str) -> bool:
    """Whether a page came before its report (its body says so)."""
    return "data-pending" in page.split("<body", 1)[1].split(">", 1)[0]


def _timed(server: Served, path: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    answer = server.get(path)
    return time.perf_counter() - started, answer.status, len(answer.body.encode())


def bench_pages(workdir: Path, runs: int, invocations: int, repeats: int) -> None:
    store = workdir / "pages" / "ironbench.db"
    store.parent.mkdir()
    started = time.perf_counter()
    big, count = build_mixed_run(store, invocations)
    small = build_small_runs(store, runs - 1)
    print(
        f"(a) store: {runs:,} runs ({count:,} invocations in {big}, {len(small):,} small baseline runs) "
        f"built in {time.perf_counter() - started:.1f} s"
    )
    with sqlite3.connect(store) as conn:
        case = conn.execute("SELECT case_id FROM invocations WHERE run_id = ? LIMIT 1", (big,)).fetchone()[0]
    with Served(store) as server:
        time.sleep(3)  # the viewer starts its report worker as it starts: let it
        for label, path, report in (
            (f"runs page ({runs:,} runs)", "/", None),
            (f"run page ({count:,} invocations)", f"/runs/{big}", f"/runs/{big}/sections"),
            (f"a case of that run ({case}: every invocation, as `ironbench log`)", f"/runs/{big}/cases/{case}", None),
            ("compare page (that run against a small one)", f"/compare?a={small[0]}&b={big}", "again"),
        ):
            started = time.perf_counter()
            answer = server.get(path)
            first = time.perf_counter() - started
            assert answer.status == 200, (path, answer.status)
            pending = _pending(answer.body)
            line = f"    {label}: served in {first:.3f} s"
            if report is not None:
                if pending:  # the page came before its report: when is the report there?
                    while True:
                        again = server.get(path if report == "again" else report)
                        if report != "again" or not _pending(again.body):
                            break
                    line += f" without its report, the report there {time.perf_counter() - started:.3f} s after"
                else:
                    line += " with its report"
            warm = statistics.median(_timed(server, path)[0] for _ in range(repeats))
            size = _timed(server, path)[2]
            print(f"{line} | then, median of {repeats}: {warm:.3f} s (goal <= 1 s) | {size / 1e6:.2f} MB")


# -- (b) a run with pages open -----------------------------------------------------------------


def noop_suite(workdir: Path) -> Path:
    target = workdir / "noop_target.py"
    target.write_text(NOOP)
    suite = {
        "suite_id": "perf_view",
        "mode": "baseline",
        "debug_enabled": False,
        "timeout_seconds": 60,
        "target": [sys.executable, str(target), "{instruction}"],
        "cases": [
            {"id": f"case_{i:02d}", "instruction": f"Write function number {i}.", "runs": NOOP_RUNS}
            for i in range(NOOP_CASES)
        ],
    }
    path = workdir / "perf_view.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


class PageClient(threading.Thread):
    """What an open run page does, over HTTP: load the page, follow its stream, and fetch
    the report's sections again when the decisions move (at most every `pace` seconds)."""

    def __init__(self, server: Served, run_id: str) -> None:
        super().__init__(daemon=True)
        self.server, self.run_id = server, run_id
        self.arrivals: dict[int, float] = {}  # seq -> when it arrived (time.time())
        self.refreshes = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        import http.client

        try:
            page = self.server.get(f"/runs/{self.run_id}")
            after = int(page.body.split('data-after="', 1)[1].split('"', 1)[0])
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
            conn.request(
                "GET",
                f"/runs/{self.run_id}/stream?after={after}",
                headers={"Host": f"127.0.0.1:{self.server.port}", "Accept": "text/event-stream"},
            )
            response = conn.getresponse()
            kind, data, decisions, refreshed = "", "", None, 0.0
            while True:
                line = response.fp.readline().decode()
                if not line:
                    return
                line = line.rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and kind:
                    payload = json.loads(data)
                    if kind == "fact":
                        self.arrivals[payload["seq"]] = time.time()
                    elif kind == "progress":
                        moved = decisions is not None and payload["decisions"] != decisions
                        ended = payload["status"] != "running"
                        if (moved and time.monotonic() - refreshed >= payload["pace"]) or ended:
                            self.server.get(f"/runs/{self.run_id}/sections")
                            self.refreshes += 1
                            refreshed = time.monotonic()
                        decisions = payload["decisions"]
                        if ended:
                            conn.close()
                            return
                    kind, data = "", ""
        except Exception as exc:  # noqa: BLE001  (a thread: the bench reports it)
            self.error = exc


def _run_id(store: Path, deadline: float) -> str:
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True) as conn:
                row = conn.execute("SELECT run_id FROM runs LIMIT 1").fetchone()
            if row:
                return row[0]
        except sqlite3.Error:
            pass
        time.sleep(0.005)
    raise AssertionError("the run did not start")


def _cpu(process: psutil.Process | None, children: bool = True) -> float:
    if process is None:
        return 0.0
    total = 0.0
    for p in [process, *(process.children(recursive=True) if children else [])]:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


def one_run(workdir: Path, suite: Path, arm: str, k: int, pages: int, browser: Chromium | None) -> dict:
    out = workdir / f"{arm}_{k}"
    subprocess.run(
        [sys.executable, "-m", "ironbench.cli.main", "db", "upgrade", "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    store = out / "ironbench.db"
    server = Served(store) if arm != "alone" else None
    opened = []
    if arm == "browser":
        assert browser is not None
        # each in its own browser context: as many streams as pages (one browser would hold six)
        opened = [browser.open(server.url, isolated=True) for _ in range(pages)]  # waiting on the runs page
    if server is not None:
        time.sleep(2)  # the viewer's worker has started: the run starts on a quiet machine
    viewer = psutil.Process(server.process.pid) if server else None
    viewer_cpu, server_cpu = _cpu(viewer), _cpu(viewer, children=False)
    browser_cpu = _cpu(psutil.Process(browser.process.pid)) if arm == "browser" and browser else 0.0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(out), "-q", "--no-report"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    clients: list[PageClient] = []
    if server is not None:
        run_id = _run_id(store, time.monotonic() + 60)
        if arm == "clients":
            clients = [PageClient(server, run_id) for _ in range(pages)]
            for client in clients:
                client.start()
        else:
            for page in opened:  # every page leaves the runs page for the run's, without waiting for the load
                browser.send("Page.navigate", {"url": f"{server.base}/runs/{run_id}"}, page.session)
    _, err = process.communicate()
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert process.returncode in (0, 1), err
    result = {
        "wall": elapsed,
        "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "viewer_cpu": _cpu(viewer) - viewer_cpu,
        "server_cpu": _cpu(viewer, children=False) - server_cpu,
        "browser_cpu": (_cpu(psutil.Process(browser.process.pid)) - browser_cpu) if arm == "browser" else 0.0,
        "lags": [],
    }
    with sqlite3.connect(store) as conn:
        run_id = conn.execute("SELECT run_id FROM runs").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM invocations").fetchone()[0] == NOOP_CASES * NOOP_RUNS
        listed = conn.execute(LISTED, (run_id,)).fetchall()
    appended = {seq: _utc(stamp) for seq, stamp in listed}
    if arm == "clients":
        for client in clients:
            client.join(60)
            assert client.error is None, client.error
            first = min(client.arrivals, default=0)
            assert list(client.arrivals) == [s for s in appended if s >= first], "a client missed or repeated"
            result["lags"] += [client.arrivals[s] - appended[s] for s in client.arrivals]
        result["refreshes"] = sum(c.refreshes for c in clients)
    if arm == "browser":
        deadline = time.monotonic() + 30
        for page in opened:
            while page.evaluate("(document.getElementById('run-status') || {}).textContent") != "finished":
                assert time.monotonic() < deadline, "a page never showed the run finished"
                time.sleep(0.05)
            shown = page.evaluate(
                "[...document.querySelectorAll('#facts li[data-shown]')]"
                ".map(li => [Number(li.dataset.seq), Number(li.dataset.shown) / 1000])"
            )
            result["lags"] += [when - appended[seq] for seq, when in shown]
            assert page.evaluate("window.ironbenchView.repeats") == 0
            page.close()
    if server is not None:
        server.stop()
    return result


def bench_run_with_pages(workdir: Path, pages: int, repeats: int, arms: list[str]) -> None:
    suite = noop_suite(workdir)
    arms = ["alone", *arms]
    results: dict[str, list[dict]] = {arm: [] for arm in arms}
    browser = Chromium(timeout=120) if "browser" in arms else None
    try:
        one_run(workdir, suite, "alone", 99, pages, None)  # warm the file cache and the imports
        for k in range(repeats):
            for arm in random.Random(k).sample(arms, len(arms)):  # interleaved, in a varying order
                result = one_run(workdir, suite, arm, k, pages, browser)
                results[arm].append(result)
                print(
                    f"    ({arm} #{k + 1}: wall {result['wall']:.2f} s, run CPU {result['cpu']:.2f} s, "
                    f"viewer CPU {result['viewer_cpu']:.2f} s ({result['server_cpu']:.2f} s serving), Chromium CPU {result['browser_cpu']:.2f} s)",
                    flush=True,
                )
    finally:
        if browser is not None:
            browser.close()
    alone = results["alone"]
    wall, cpu = statistics.median(r["wall"] for r in alone), statistics.median(r["cpu"] for r in alone)
    total = NOOP_CASES * NOOP_RUNS
    print(f"(b) `ironbench run` of {total} no-op invocations, median of {repeats}, interleaved:")
    print(f"    alone: wall {wall:.2f} s | the run's CPU (targets included) {cpu:.2f} s")
    for arm, label in (("clients", f"{pages} page clients over HTTP"), ("browser", f"{pages} Chromium pages")):
        if arm not in results:
            continue
        rows = results[arm]
        w, c = statistics.median(r["wall"] for r in rows), statistics.median(r["cpu"] for r in rows)
        lags = [lag for r in rows for lag in r["lags"]]
        extra = (
            f" | report sections fetched again {statistics.median(r['refreshes'] for r in rows):.0f} times"
            if (arm == "clients")
            else f" | Chromium's CPU {statistics.median(r['browser_cpu'] for r in rows):.2f} s"
        )
        print(
            f"    viewer + {label}: wall {w:.2f} s = {w / wall:.3f}x (goal <= 1.05) | the run's CPU {c:.2f} s = "
            f"{c / cpu:.3f}x | the viewer's CPU {statistics.median(r['viewer_cpu'] for r in rows):.2f} s "
            f"({statistics.median(r['server_cpu'] for r in rows):.2f} s serving, the rest rendering reports){extra}"
        )
        print(
            f"      update latency, appended -> {'on the stream' if arm == 'clients' else 'on the page'}: "
            f"median {statistics.median(lags) * 1000:.0f} ms, p95 {_pct(lags, 0.95) * 1000:.0f} ms, "
            f"max {max(lags) * 1000:.0f} ms over {len(lags):,} events x pages (goal: <= 1 s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--invocations", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=["pages", "run"])
    parser.add_argument(
        "--arms", default="clients,browser", help="Beside the run alone: clients (over HTTP), browser (Chromium)."
    )
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "pages"):
            bench_pages(Path(tmp), args.runs, args.invocations, 5)
        if args.only in (None, "run"):
            arms = [a for a in args.arms.split(",") if a and (a != "browser" or chromium_path() is not None)]
            bench_run_with_pages(Path(tmp), args.pages, args.repeats, arms)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
