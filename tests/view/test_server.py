"""`ironbench view` through its front door, over plain HTTP: what it lists is what `runs`
counts; it refuses foreign hosts and origins, writes, tokenless access off loopback and any
file its runs did not record; it writes nothing; a stream resumes exactly; Ctrl-C stops it."""

import hashlib
import json
import os
import socket
import sqlite3
from urllib.parse import quote

import pytest

from tests.conftest import cli
from tests.view.served import Served


@pytest.fixture(scope="module")
def served(store):
    with Served(store.path) as server:
        yield server


def _invocations(store_path, run_id):
    with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as conn:
        return [
            (seq, json.loads(payload))
            for seq, payload in conn.execute(
                "SELECT seq, payload FROM events WHERE run_id = ? AND type = 'invocation_completed' ORDER BY seq",
                (run_id,),
            )
        ]


def test_the_runs_page_counts_what_ironbench_runs_counts(store, served):
    page = served.get("/")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    listed = json.loads(cli("runs", "--store", str(store.path), "--format", "json", check=True).stdout)
    assert len(listed) == 6
    for run in listed:
        row = page.body.split(f'<tr data-run="{run["run_id"]}">', 1)[1].split("</tr>", 1)[0]
        assert f">{run['suite_id']}<" in row and run["status"] in row
        if run["mode"] != "gauntlet":
            assert f'data-v="{run["invocations"]}"' in row
            assert f"{run['successes']} (" in row


def test_every_answer_carries_a_strict_content_security_policy(served):
    for path in ("/", "/compare", "/static/view.js", "/nope"):
        answer = served.get(path)
        assert "default-src 'none'" in answer.headers["content-security-policy"], path
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"Host": "attacker.example:80"}, 421),  # DNS rebinding: a foreign name pointed at loopback
        ({"Host": "attacker.example"}, 421),
        ({"Origin": "http://attacker.example"}, 403),
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}, 403),
    ],
)
def test_a_foreign_host_or_origin_is_refused(served, headers, status):
    answer = served.get("/", headers)
    assert answer.status == status
    assert "refused" in answer.body and "<" not in answer.body


def test_the_names_of_this_server_are_accepted(served):
    for host in (f"localhost:{served.port}", f"127.0.0.1:{served.port}"):
        assert served.get("/", {"Host": host, "Origin": f"http://{host}"}).status == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_it_only_reads(served, method):
    assert served.get("/", method=method).status == 405


def _drill_invocation(store):
    return _invocations(store.path, store.drill)[0]


@pytest.mark.parametrize(
    "name",
    [
        "../../../../../../etc/passwd",
        "..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        "%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "%2Fetc%2Fpasswd",
        "generate.txt%00.png",
    ],
)
def test_a_path_out_of_the_debug_folder_is_refused(store, served, name):
    seq, _ = _drill_invocation(store)
    answer = served.get(f"/runs/{store.drill}/invocations/{seq}/debug/{name}")
    assert answer.status in (403, 404)
    assert "root:" not in answer.body


def test_a_symlink_planted_in_the_debug_folder_is_refused(store, served, tmp_path):
    seq, event = _drill_invocation(store)
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret")
    link = os.path.join(event["debug_path"], "planted.txt")
    os.symlink(secret, link)
    try:
        listing = served.get(f"/runs/{store.drill}/invocations/{seq}")
        assert "generate.txt" in listing.body and "planted.txt" not in listing.body
        answer = served.get(f"/runs/{store.drill}/invocations/{seq}/debug/planted.txt")
        assert answer.status == 403 and "the secret" not in answer.body
    finally:
        os.unlink(link)


def test_a_debug_folder_that_is_a_symlink_out_is_refused(store, served, tmp_path):
    seq, event = _invocations(store.path, store.drill)[1]
    debug = event["debug_path"]
    os.rename(debug, debug + ".moved")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "generate.txt").write_text("not the run's")
    os.symlink(tmp_path / "outside", debug)
    try:
        answer = served.get(f"/runs/{store.drill}/invocations/{seq}/debug/generate.txt")
        assert answer.status == 403 and "not the run's" not in answer.body
        assert "a symlink leads out" in served.get(f"/runs/{store.drill}/invocations/{seq}").body
    finally:
        os.unlink(debug)
        os.rename(debug + ".moved", debug)


def test_the_debug_files_and_the_output_are_read_in_place_as_text(store, served):
    seq, event = _drill_invocation(store)
    page = served.get(f"/runs/{store.drill}/invocations/{seq}")
    assert page.status == 200
    assert '<section id="model">' not in page.body  # it ran without a model gateway: no calls to list
    assert quote(event["debug_path"], safe="/") in page.body or event["debug_path"] in page.body
    generate = served.get(f"/runs/{store.drill}/invocations/{seq}/debug/generate.txt")
    assert generate.status == 200 and generate.headers["content-type"].startswith("text/plain")
    with open(os.path.join(event["debug_path"], "generate.txt"), encoding="utf-8") as file:
        assert generate.body == file.read()
    stdout = served.get(f"/runs/{store.drill}/invocations/{seq}/stdout")
    assert stdout.status == 200 and stdout.headers["content-type"].startswith("text/plain")
    assert "<script>" in stdout.body  # as the target printed it: text/plain and nosniff keep it text


def test_an_invocation_of_another_run_or_no_invocation_is_not_served(store, served):
    seq, _ = _drill_invocation(store)
    assert served.get(f"/runs/{store.examples.baseline}/invocations/{seq}/stdout").status == 404
    assert served.get(f"/runs/{store.drill}/invocations/{seq}/..%2F..%2Fetc%2Fpasswd").status == 404
    assert served.get(f"/runs/{store.drill}/invocations/1").status == 404  # run_started, not an invocation
    assert served.get("/runs/no_such_run").status == 404


def test_a_stream_resumes_exactly_from_its_last_event_id(store, served):
    """Read a run's events from the start, drop the connection, reconnect with Last-Event-ID:
    the two parts are every listed event of the run, in the store's order, none twice."""
    run = store.examples.adversarial
    path = f"/runs/{run}/stream?after=0"
    first = [e for e in served.events(path, 12) if e["event"] == "fact"]
    # the rest, up to the end of the catch-up (its progress event carries the run's state after it)
    rest = served.events(f"/runs/{run}/stream", last_event_id=first[-1]["id"], until="progress")[:-1]
    seqs = [e["id"] for e in first + rest]
    with sqlite3.connect(f"file:{store.path}?mode=ro", uri=True) as conn:
        listed = [
            r[0]
            for r in conn.execute(
                "SELECT seq FROM events WHERE run_id = ? AND type IN ('run_started', 'ai_output_rejected', "
                "'invocation_completed', 'decision_taken', 'variant_dropped', 'run_finished') "
                "OR (run_id = ? AND type = 'variant_generated' AND json_extract(payload, '$.metadata.source') = 'ai') "
                "ORDER BY seq",
                (run, run),
            )
        ]
    assert seqs == listed
    assert all(e["data"]["seq"] == e["id"] for e in first + rest)


@pytest.mark.slow
def test_the_store_is_not_written(store, tmp_path):
    """Served from a folder the viewer can read but not write: every page still answers."""
    copy = tmp_path / "ro"
    copy.mkdir()
    target = copy / "ironbench.db"
    with sqlite3.connect(store.path) as source, sqlite3.connect(target) as destination:
        source.backup(destination)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    before = sorted(p.name for p in copy.iterdir())
    with Served(target) as server:
        for path in ("/", f"/runs/{store.examples.baseline}", f"/runs/{store.examples.gauntlet}", "/compare"):
            assert server.get(path).status == 200, path
        server.events("/stream?after=0", 3)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in copy.iterdir() if not p.name.endswith(("-shm", "-wal"))) == before


def test_ctrl_c_stops_it_at_once_with_a_stream_open(store):
    server = Served(store.path)
    try:
        conn = socket.create_connection(("127.0.0.1", server.port))
        conn.sendall(f"GET /stream HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        assert b"text/event-stream" in conn.recv(4096)
        took, code, err = server.stop()
        conn.close()
    finally:
        server.close()
    assert took < 3, f"took {took:.1f} s"
    assert code == 0 and err.strip().endswith("ironbench view: stopped")


def test_off_loopback_a_token_is_required(store):
    with Served(store.path, "--host", "0.0.0.0") as server:
        assert server.token and len(server.token) >= 20  # generated, and printed in the address
        assert server.get("/").status == 401
        assert server.get("/?token=wrong").status == 401
        moved = server.get(f"/?token={server.token}&status=finished")
        assert moved.status == 303 and moved.headers["location"] == "/?status=finished"
        cookie = moved.headers["set-cookie"].split(";")[0]
        assert "HttpOnly" in moved.headers["set-cookie"] and "SameSite=Strict" in moved.headers["set-cookie"]
        assert server.get("/", {"Cookie": cookie}).status == 200
        assert server.get("/", {"Cookie": cookie, "Host": "attacker.example"}).status == 421


def test_a_given_token_is_required_on_loopback_too(store):
    with Served(store.path, "--token", "s3cret-token-for-tests") as server:
        assert server.token == "s3cret-token-for-tests"
        assert server.get("/").status == 401
        assert server.get("/?token=s3cret-token-for-tests").status == 303


@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(tmp_path, store):
    missing = cli("view", "--store", str(tmp_path / "none.db"), "--port", "0")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no store here" in missing.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = cli("view", "--store", str(store.path), "--port", str(taken.getsockname()[1]))
    assert busy.returncode == 2 and busy.stderr.count("\n") == 1 and "cannot listen" in busy.stderr
