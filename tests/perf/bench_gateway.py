"""The model gateway's own cost (not collected by pytest).

Run: python tests/perf/bench_gateway.py [--calls 1000] [--runs 8 64] [--rounds 3]

(a) Per call: a canned model that answers at once (canned-echo), asked `--calls` times
    in-process through llm, then through the gateway by the official Ollama client and
    by the official OpenAI client (one connection each, as a target keeps one), and by a
    bare http.client. The gateway's cost per call is what remains of the wall time once
    the model's and the client's own CPU time are taken off; the issue's bound is 5 ms.
(b) Per run: runs of no-op invocations (python -c pass, two sizes) with and without
    --serve-model (no call made), `--rounds` times each, alternating; the ratio of the
    medians, and from the two sizes the cost per invocation (the issue's bound is 1.05x)
    apart from the fixed cost of starting the gateway.
"""

import argparse
import http.client
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ["IRONBENCH_LLM_PLUGINS"] = "tests.fixtures.llm_scripted"
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))

import yaml

from ironbench.gateway import GatewayConfig, GatewayProcess, Serving
from ironbench.gateway.server import new_token


def per_call(calls: int) -> None:
    import llm
    import ollama
    import openai

    from ironbench.llms.access import get_model

    model = get_model("canned-echo")
    messages = [{"role": "user", "content": "hello there"}]
    started = time.perf_counter()
    for _ in range(calls):
        model.prompt("hello there").text()
    in_process = (time.perf_counter() - started) / calls * 1000
    assert llm  # imported for its plugins, as the gateway does
    with GatewayProcess(GatewayConfig(Serving("canned-echo").to_dict())).start() as gateway:
        gateway.ready()
        link, token = gateway.link(), new_token()
        link.open(token)
        env = link.env(token)
        figures = {}
        netloc, _, path = env["OLLAMA_HOST"].removeprefix("http://").partition("/")
        raw = http.client.HTTPConnection(netloc)
        body = json.dumps({"model": "m", "messages": messages, "stream": False})

        def bare() -> None:
            raw.request("POST", f"/{path}/api/chat", body, {"Content-Type": "application/json"})
            raw.getresponse().read()

        by_ollama = ollama.Client(host=env["OLLAMA_HOST"])
        by_openai = openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key="x", max_retries=0)
        clients = {
            "bare http.client": bare,
            "ollama": lambda: by_ollama.chat(model="m", messages=messages),
            "openai": lambda: by_openai.chat.completions.create(model="m", messages=messages),
        }
        for name, call in clients.items():
            call()  # a first call opens the connection
            started, cpu = time.perf_counter(), time.process_time()
            for _ in range(calls):
                call()
            figures[name] = (
                (time.perf_counter() - started) / calls * 1000,
                (time.process_time() - cpu) / calls * 1000,  # the client's own CPU, in this process
            )
        recorded = link.close(token)
        served = statistics.mean(c["latency_ms"] for c in recorded)
    print(f"(a) {calls} calls of canned-echo, ms per call")
    print(f"    in-process through llm:           {in_process:8.3f}")
    print(f"    inside the gateway (its latency): {served:8.3f}")
    print("    by client: wall per call, the client's own CPU per call, and what remains beyond the model")
    for name, (ms, client) in figures.items():
        print(
            f"    {name + ':':18s}{ms:8.3f} wall, {client:6.3f} client CPU: {ms - client - in_process:6.3f} ms "
            f"beyond the model and the client ({ms / in_process:.1f}x in-process wall)"
        )


def _suite(tmp: Path, runs: int) -> Path:
    suite = tmp / f"noop-{runs}.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "suite_id": "noop",
                "mode": "baseline",
                "timeout_seconds": 30,
                "target": [sys.executable, "-c", "pass", "{instruction}"],
                "rules": "exit-code",
                "cases": [{"id": "noop", "instruction": "nothing", "stop": {"rule": "fixed", "runs": runs}}],
            }
        )
    )
    return suite


def _run_phase(out: Path) -> float:
    """Seconds from the run's first event to its last: the invocations, not the process's start."""
    from datetime import datetime

    with sqlite3.connect(out / "ironbench.db") as conn:
        started, finished = conn.execute("SELECT started_utc, finished_utc FROM runs").fetchone()
    return (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()


def per_run(sizes: list[int], rounds: int) -> None:
    """Each size with and without the gateway, alternating; the medians, their ratio, and
    from the two sizes the cost per invocation and the fixed cost of a run."""
    medians: dict[tuple[int, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="ironbench-bench-gateway-") as tmp:
        times: dict[tuple[int, str], list[float]] = {}
        phases: dict[tuple[int, str], list[float]] = {}  # from run_started to run_finished
        for round_ in range(rounds):
            for runs in sizes:
                for name, extra in (("without", []), ("with", ["--serve-model", "canned-echo"])):
                    out = Path(tmp) / f"out-{runs}-{name}-{round_}"
                    started = time.perf_counter()
                    subprocess.run(
                        [sys.executable, "-m", "ironbench.cli.main", "run", str(_suite(Path(tmp), runs))]
                        + ["--out", str(out), "-q", "--no-report", "--jobs", "2", *extra],
                        check=True,
                        capture_output=True,
                        cwd=REPO,
                    )
                    times.setdefault((runs, name), []).append(time.perf_counter() - started)
                    phases.setdefault((runs, name), []).append(_run_phase(out))
        print(f"(b) no-op invocations (python -c pass), --jobs 2, median of {rounds} rounds, alternating")
        for runs in sizes:
            for name in ("without", "with"):
                medians[runs, name] = statistics.median(times[runs, name])
            print(
                f"    {runs:4d} invocations: without {medians[runs, 'without']:6.2f} s, with --serve-model "
                f"{medians[runs, 'with']:6.2f} s: {medians[runs, 'with'] / medians[runs, 'without']:.3f}x"
            )
            inside = {name: statistics.median(phases[runs, name]) for name in ("without", "with")}
            print(
                f"          the run itself (run_started to run_finished): without {inside['without']:6.2f} s, "
                f"with {inside['with']:6.2f} s: {inside['with'] / inside['without']:.3f}x"
            )
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        slope = {
            name: (medians[large, name] - medians[small, name]) / (large - small) * 1000 for name in ("without", "with")
        }
        fixed = {name: medians[small, name] - slope[name] * small / 1000 for name in ("without", "with")}
        print(
            f"    per invocation: without {slope['without']:.1f} ms, with {slope['with']:.1f} ms "
            f"({slope['with'] / slope['without']:.3f}x); fixed per run: without {fixed['without']:.2f} s, "
            f"with {fixed['with']:.2f} s (+{fixed['with'] - fixed['without']:.2f} s: the gateway's start, llm's import)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--runs", type=int, nargs="+", default=[8, 64], help="run sizes (two give a slope)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    per_call(args.calls)
    per_run(args.runs, args.rounds)


if __name__ == "__main__":
    main()
