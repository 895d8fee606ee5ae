"""`ironbench view` in headless Chromium, as a person uses it: a run in progress shows each
decision within a second of its event; a page whose server goes away and comes back misses
nothing and repeats nothing; the compare page decides what `ironbench compare` decides;
markup from a suite, a target's output or a model's answer stays text; pages read without
JavaScript; nothing loads from anywhere but the viewer."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, cli, make_suite, write_suite
from tests.report.chromium import BrowserError, Chromium, chromium_path
from tests.report.examples import INJECTED
from tests.view.served import Served

# The end-to-end tier (`pytest -m slow`): a real Chromium over a live viewer.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does)"
    ),
]

# The README's and the docs' screenshot of a run in progress: written there when this is set.
SCREENSHOT = REPO / "docs" / "assets" / "viewer.png"
UPDATE_SCREENSHOT = os.environ.get("IRONBENCH_UPDATE_SCREENSHOTS") == "1"

# The facts a run's page lists (ironbench/view/facts.py `listed`), as SQL over the events.
LISTED = (
    "SELECT seq FROM events WHERE run_id = ? AND (type IN ('run_started', 'ai_output_rejected', "
    "'invocation_completed', 'decision_taken', 'variant_dropped', 'turn_answered', 'turn_scored', "
    "'gate_designed', 'gate_looked', 'run_finished', 'run_aborted') OR (type = 'variant_generated' "
    "AND json_extract(payload, '$.metadata.source') = 'ai')) ORDER BY seq"
)


def _rows(store: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def wait_until(predicate, timeout: float = 30, what: str = "the page"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def settled(page, timeout: float = 30) -> None:
    """Wait until the page holds its report (a page may come before it, and get it later:
    by script, or by reloading itself)."""

    def done() -> bool:
        try:
            return page.evaluate("document.readyState === 'complete' && !document.body.hasAttribute('data-pending')")
        except BrowserError:  # the page was reloading
            return False

    wait_until(done, timeout, "the page's report")


class LiveRun:
    """`ironbench run` in a subprocess, against the scripted target: cases whose outcomes
    alternate (so each takes all its runs and ends `exhausted`), each run `sleep_ms` long."""

    def __init__(self, out: Path, cases: int, runs: int, sleep_ms: int, label: str = "live") -> None:
        self.store = out / "ironbench.db"
        suite = write_suite(
            out.parent / f"{out.name}.yaml",
            make_suite({f"case_{i}": runs for i in range(cases)}, suite_id="live", debug_enabled=False),
        )
        outcomes = {f"case_{i}": ["success", "generation"] for i in range(cases)}
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env |= {"SCRIPTED_OUTCOMES": json.dumps(outcomes), "SCRIPTED_SLEEP_MS": str(sleep_ms)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(out), "--label", label],
            cwd=REPO,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def started(self) -> str:
        """The run's id, once its start is in the store."""
        found = wait_until(
            lambda: self.store.exists() and _rows(self.store, "SELECT run_id FROM runs"), 60, "the run to start"
        )
        return found[0][0]

    def wait(self) -> None:
        _, err = self.process.communicate(timeout=120)
        assert self.process.returncode in (0, 1), (
            f"{self.process.returncode}: {err}"
        )  # 1: a verdict that fails (exhausted cases), not a crash

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@pytest.fixture(scope="module")
def browser():
    with Chromium() as chromium:
        yield chromium


@pytest.fixture
def fresh_store(tmp_path) -> Path:
    """An empty store at the current schema (a viewer serves a store that exists)."""
    store = tmp_path / "out" / "ironbench.db"
    cli("db", "upgrade", "--store", str(store), check=True)
    return store


def _status(page) -> str:
    return page.evaluate("document.getElementById('run-status').textContent")


def test_a_run_in_progress_shows_each_decision_within_a_second(fresh_store, browser, tmp_path):
    with Served(fresh_store) as server:
        runs_page = browser.open(server.url)
        run = LiveRun(fresh_store.parent, cases=5, runs=4, sleep_ms=300, label="nightly " + INJECTED)
        try:
            run_id = run.started()
            # the runs page was open before the run began: its row arrives over the stream, label as text
            row = wait_until(
                lambda: runs_page.evaluate(
                    f"(document.querySelector('tr[data-run=\"{run_id}\"]') || {{}}).innerText || ''"
                ),
                10,
                "the run's row on the runs page",
            )
            assert INJECTED in row and runs_page.evaluate("typeof window.__pwned") == "undefined"
            page = browser.open(f"{server.base}/runs/{run_id}")
            assert _status(page) == "running"
            wait_until(
                lambda: page.evaluate("document.querySelectorAll('#facts li.t-decision_taken').length") >= 2,
                what="two decisions",
            )
            shot = tmp_path / "viewer.png"
            page.screenshot(shot, height=900)
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            if UPDATE_SCREENSHOT:
                shutil.copyfile(shot, SCREENSHOT)
            run.wait()
        finally:
            run.close()
        wait_until(lambda: _status(page) == "finished", 10, "the run's status to turn finished")
        lags = page.evaluate(
            "[...document.querySelectorAll('#facts li.t-decision_taken[data-shown]')]"
            ".map(li => [Number(li.dataset.seq), Number(li.dataset.shown) - Date.parse(li.dataset.appended)])"
        )
        assert page.problems() == []
        assert all(r.startswith(server.base) for r in page.requests())
    decisions = [r[0] for r in _rows(fresh_store, "SELECT seq FROM events WHERE type = 'decision_taken' ORDER BY seq")]
    assert len(decisions) == 5
    # every decision is on the page once: those before it opened from the server's HTML, the rest pushed live
    shown = page.evaluate(
        "[...document.querySelectorAll('#facts li.t-decision_taken')].map(li => Number(li.dataset.seq))"
    )
    assert sorted(shown) == decisions
    assert len(lags) >= 3, lags  # most decisions came after the page opened
    assert all(0 <= lag <= 1000 for _, lag in lags), lags
    done = page.evaluate("[document.getElementById('progress').value, document.getElementById('progress').max]")
    assert done == [20, 20]


VISIBILITY = """(hidden => {
    Object.defineProperty(document, 'hidden', {configurable: true, get: () => hidden});
    Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => hidden ? 'hidden' : 'visible'});
    document.dispatchEvent(new Event('visibilitychange'));
})"""


def test_a_page_that_loses_its_stream_misses_nothing_and_repeats_nothing(fresh_store, browser):
    """Twice in one run the page loses its stream while events are appended: its tab is
    hidden (it gives the stream back) and shown again; then its viewer is stopped and started
    again on the same port. The facts it shows are exactly the run's, in the store's order,
    none twice."""
    server = Served(fresh_store)
    run = LiveRun(fresh_store.parent, cases=6, runs=4, sleep_ms=250)

    def appended_while(pause) -> None:
        before = _rows(fresh_store, "SELECT max(seq) FROM events")[0][0]
        pause()
        assert _rows(fresh_store, "SELECT max(seq) FROM events")[0][0] > before, "nothing was appended meanwhile"
        assert run.process.poll() is None, "the run ended too soon"

    try:
        run_id = run.started()
        page = browser.open(f"{server.base}/runs/{run_id}")
        after = page.evaluate("Number(document.body.dataset.after)")
        wait_until(lambda: page.evaluate("window.ironbenchView.seqs.length") >= 3, what="three facts pushed")

        def hidden() -> None:
            page.evaluate(f"{VISIBILITY}(true)")
            assert page.evaluate("window.ironbenchView.source") is None  # the stream was given back
            shown = page.evaluate("window.ironbenchView.seqs.length")
            time.sleep(1)
            assert page.evaluate("window.ironbenchView.seqs.length") == shown  # nothing arrives while hidden

        appended_while(hidden)
        page.evaluate(f"{VISIBILITY}(false)")
        seen = page.evaluate("window.ironbenchView.seqs.length")
        wait_until(lambda: page.evaluate("window.ironbenchView.seqs.length") > seen, what="the page to catch up")
        server.stop()
        appended_while(lambda: time.sleep(1.5))  # no server at all
        with Served(fresh_store, port=server.port):
            run.wait()
            wait_until(lambda: _status(page) == "finished", 20, "the run's status to turn finished")
            seqs = page.evaluate("window.ironbenchView.seqs")
            repeats = page.evaluate("window.ironbenchView.repeats")
    finally:
        run.close()
        server.close()
    expected = [seq for (seq,) in _rows(fresh_store, LISTED, (run_id,)) if seq > after]
    assert seqs == expected
    assert repeats == 0


@pytest.fixture(scope="module")
def served(store):
    with Served(store.path) as server:
        yield server


def test_the_compare_page_decides_what_ironbench_compare_decides(store, served, browser):
    for a, b in (
        (store.examples.baseline, store.examples.baseline_regressed),
        (store.examples.baseline_regressed, store.examples.baseline),
    ):
        result = cli("compare", a, b, "--store", str(store.path), "--format", "json")
        assert result.returncode in (0, 1), result.stderr
        decided = json.loads(result.stdout)
        page = browser.open(f"{served.base}/compare?a={a}&b={b}")
        try:
            settled(page)
            gate = page.evaluate("document.querySelector('#compare .gate').innerText")
            verdict = decided["verdict"].upper() if decided["failed"] else decided["verdict"]
            assert f"Gate: {verdict}" in gate and f"exit {result.returncode}." in gate
            assert decided["reason"] in gate
            rows = page.evaluate(
                "[...document.querySelector('#compare table').tBodies[0].rows]"
                ".map(r => [r.cells[0].innerText, r.cells[r.cells.length - 1].innerText])"
            )
            assert len(rows) == len(decided["cases"])
            for case in decided["cases"]:
                assert [case["verdict"]] == [v for label, v in rows if label.split("/")[0].strip() == case["case_id"]]
            # the address names the two runs: what a CI job prints leads back here
            assert page.evaluate("location.search") == f"?a={a}&b={b}"
            assert page.problems() == []
        finally:
            page.close()


def _drill_seq(store) -> int:
    return _rows(
        store.path, "SELECT min(seq) FROM events WHERE run_id = ? AND type = 'invocation_completed'", (store.drill,)
    )[0][0]


@pytest.mark.parametrize(
    "where",
    [
        "a suite's instruction (the run's report)",
        "a suite's instruction (its case)",
        "a target's output (the invocation)",
        "a target's output (the file)",
        "a model's answer (a gauntlet run)",
        "a model's answer (a conversation)",
        "a model's answer (a rejected AI rewrite)",
        "a model's answer (the run's live list)",
    ],
)
def test_markup_from_a_suite_a_target_or_a_model_shows_as_text(store, served, browser, where):
    e = store.examples
    path = {
        "a suite's instruction (the run's report)": f"/runs/{e.baseline}",
        "a suite's instruction (its case)": f"/runs/{e.baseline}/cases/flaky",
        "a target's output (the invocation)": f"/runs/{store.drill}/invocations/{_drill_seq(store)}",
        "a target's output (the file)": f"/runs/{store.drill}/invocations/{_drill_seq(store)}/stdout",
        "a model's answer (a gauntlet run)": f"/runs/{e.gauntlet}",
        "a model's answer (a conversation)": f"/runs/{e.gauntlet}/conversations/plain/sky/1",
        "a model's answer (a rejected AI rewrite)": f"/runs/{e.adversarial}/cases/cache",
        "a model's answer (the run's live list)": f"/runs/{e.adversarial}",
    }[where]
    page = browser.open(served.base + path)
    try:
        settled(page)
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.evaluate(f"document.body.innerText.includes({json.dumps(INJECTED)})"), where
        assert page.evaluate("document.querySelectorAll('script:not([src]), img[src=x], [onerror]').length") == 0
        assert page.problems() == []  # a refused inline script would be logged here
        assert all(r.startswith(served.base) for r in page.requests())
    finally:
        page.close()


@pytest.mark.parametrize("kind", ["runs", "baseline", "gauntlet", "compare", "case", "invocation"])
def test_every_page_reads_without_javascript(store, served, browser, kind):
    e = store.examples
    path = {
        "runs": "/",
        "baseline": f"/runs/{e.baseline}",
        "gauntlet": f"/runs/{e.gauntlet}",
        "compare": f"/compare?a={e.baseline}&b={e.baseline_regressed}",
        "case": f"/runs/{e.baseline}/cases/flaky",
        "invocation": f"/runs/{store.drill}/invocations/{_drill_seq(store)}",
    }[kind]
    page = browser.open(served.base + path, scripts=False)
    try:
        settled(page)
        assert page.evaluate("window.ironbenchView === undefined")  # the script did not run
        sections = page.evaluate("[...document.querySelectorAll('section')].map(s => s.id)")
        expected = {
            "runs": ["runs-list", "compare-pick"],
            "baseline": ["live", "verdict", "outcomes", "baseline", "metadata"],
            "gauntlet": ["live", "verdict", "gauntlet", "metadata"],
            "compare": ["verdict", "compare", "outcomes", "baseline", "metadata", "compare-pick"],
            "case": ["case"],
            "invocation": ["facts", "instruction", "output", "debug"],
        }[kind]
        assert [s for s in sections if s in expected] == expected, sections
        assert page.evaluate("document.body.innerText.length") > 300
        assert page.problems() == []
    finally:
        page.close()


@pytest.mark.parametrize("scripts", [True, False])
def test_a_page_that_comes_before_its_report_gets_it(store, browser, scripts):
    """A report that takes long to render (here: any, the page waits for none) leaves the
    page its live parts at once; the report follows, fetched by the script or, without
    one, by the page reloading itself."""
    with Served(store.path, env={"IRONBENCH_VIEW_PAGE_WAIT": "0"}) as server:
        path = f"/runs/{store.examples.baseline}"
        first = server.get(path).body
        body = first.split("<body", 1)[1].split(">", 1)[0]
        assert " data-pending" in body
        assert 'id="pending"' in first and 'id="live"' in first and 'id="verdict"' not in first
        page = browser.open(server.base + path, scripts=scripts)
        try:
            settled(page)
            sections = page.evaluate("[...document.querySelectorAll('#report section')].map(s => s.id)")
            assert sections[:3] == ["verdict", "outcomes", "baseline"] and "pending" not in sections
            links = page.evaluate("[...document.querySelectorAll('nav a')].map(a => a.getAttribute('href'))")
            assert links[0] == "#live" and "#verdict" in links and links[-1] == "#drill"
            assert page.problems() == []
        finally:
            page.close()


def test_a_gated_run_shows_each_look_as_it_arrives_and_the_verdict_once_decided(fresh_store, browser):
    from tests.run.test_gate import coin, write_coin_suite

    out = fresh_store.parent
    suite = write_coin_suite(out.parent / "coin.yaml", cases=4)
    a = cli("run", str(suite), "--target", coin(0.8, "main"), "--out", str(out), "-q", "--no-report", check=True)
    run_a = a.stdout.strip()
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"COIN_SLEEP_MS": "400"}
    with Served(fresh_store) as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--target", coin(0.8, "sound"),
             "--against", run_a, "--drop", "0.3", "--jobs", "1", "--out", str(out), "-q"],
            cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            found = wait_until(
                lambda: _rows(fresh_store, "SELECT run_id FROM runs WHERE run_id <> ?", (run_a,)), 60, "the branch"
            )
            run_id = found[0][0]
            page = browser.open(f"{server.base}/runs/{run_id}")
            wait_until(
                lambda: page.evaluate("document.querySelectorAll('#facts li.t-gate_looked').length") >= 1,
                what="the gate's first look",
            )
            _, err = process.communicate(timeout=120)
            assert process.returncode in (0, 1), err
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        taken = _rows(fresh_store, "SELECT seq, decision FROM gate_looks WHERE run_id = ? ORDER BY seq", (run_id,))
        verdict = wait_until(
            lambda: page.evaluate("(document.querySelector('#verdict li') || {}).innerText || ''").startswith(
                f"Gate against {run_a}: {taken[-1][1]}"
            ),
            15,
            "the gate's verdict",
        )
        assert verdict
        shown = page.evaluate(
            "[...document.querySelectorAll('#facts li.t-gate_looked')]"
            ".map(li => [Number(li.dataset.seq), li.querySelector('.badge').innerText, li.hasAttribute('data-shown')])"
        )
        assert sorted((seq, decision) for seq, decision, _ in shown) == taken  # every look, once, as decided
        assert any(pushed for _, _, pushed in shown)  # at least one arrived over the stream, not in the first HTML
        assert page.evaluate("document.querySelectorAll('#facts li.t-gate_designed').length") == 1
        assert page.evaluate("document.querySelectorAll('#gate svg.chart circle').length") == len(taken)
        assert page.problems() == []
        page.close()
