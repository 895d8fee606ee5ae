"""Bad prices and budgets are bad input: one line naming the value, exit 2, nothing written."""

import pytest
import yaml

from tests.conftest import SCRIPTED_TARGET, cli


def suite_file(tmp_path, **fields):
    data = {
        "suite_id": "s",
        "mode": "baseline",
        "target": SCRIPTED_TARGET,
        "cases": [{"id": "a", "instruction": "Write a function named a.", "runs": 1}],
        **fields,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    "args, said",
    [
        (["--price", "my-model=0.3"], "--price my-model: '0.3': expected IN/OUT"),
        (["--price", "my-model=0.3/lots"], "--price my-model: 'lots' is not a number of USD"),
        (["--budget", "0"], "--budget"),
    ],
)
def test_a_bad_price_or_budget_on_the_command_line(tmp_path, args, said):
    result = cli("run", str(suite_file(tmp_path)), "--out", str(tmp_path / "out"), *args)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert said in result.stderr and not (tmp_path / "out" / "ironbench.db").exists()


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"prices": {"my-model": "cheap"}}, "prices.my-model"),
        ({"prices": {"my-model": {"input": 1}}}, "prices.my-model"),
        ({"budget": -2}, "budget"),
    ],
)
def test_a_bad_price_or_budget_in_a_suite(tmp_path, fields, said):
    result = cli("run", str(suite_file(tmp_path, **fields)), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert said in result.stderr and not (tmp_path / "out" / "ironbench.db").exists()
