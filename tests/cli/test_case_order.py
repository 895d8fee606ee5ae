"""Case ids listed as people count them (humaneval_2 before humaneval_12) by `show`, its JSON,
the report and the viewer, whatever order the cases ran in."""

import json
import re

import pytest

from tests.conftest import cli, make_suite, write_suite
from tests.view.served import Served

RAN = ["c_12", "c_2", "c_1"]  # the suite's order, so the run's: neither natural nor as text
COUNTED = ["c_1", "c_2", "c_12"]


def _order(found: list[str]) -> list[str]:
    """The case ids in the order they first appear."""
    return list(dict.fromkeys(found))


@pytest.mark.slow
def test_every_listing_of_cases_counts_them(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite(dict.fromkeys(RAN, 3)))
    out = tmp_path / "out"
    env = {"SCRIPTED_OUTCOMES": json.dumps({"c_2": ["success", "validation", "success"]})}
    run_id = cli("run", str(suite), "--out", str(out), "-q", "--jobs", "1", env=env, check=True).stdout.strip()
    case = re.compile(r"^(c_\d+)\s", re.MULTILINE)

    show = cli("show", run_id, "--out", str(out), check=True).stdout
    table, _, passk = show.partition("pass@k and pass^k")
    assert case.findall(table) == COUNTED
    assert case.findall(passk) == COUNTED
    shown = json.loads(cli("show", run_id, "--out", str(out), "--format", "json", check=True).stdout)
    assert [c["case_id"] for c in shown["cases"]] == COUNTED

    page = (out / run_id / "report.html").read_text()
    baseline = page[page.index('<section id="baseline"') :]
    assert _order(re.findall(r"<td>(c_\d+)</td>", baseline)) == COUNTED
    assert "for c_1 and c_12" in page  # the verdict's names too

    with Served(out / "ironbench.db") as served:
        drill = served.get(f"/runs/{run_id}").body
    assert _order(re.findall(rf"/runs/{run_id}/cases/(c_\d+)", drill)) == COUNTED
