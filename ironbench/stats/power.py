"""Planning a comparison: how many runs per case find a given drop with a given power."""

from ironbench.core.errors import IronbenchError
from ironbench.stats.exact import fisher_power, runs_needed, stratified_power

MAX_RUNS = 500


def plan_runs(p: float, drop: float, cases: int = 1, alpha: float = 0.05, power: float = 0.8,
              gate: str = "overall") -> dict:
    """Runs per case on each side for `compare` to find a drop from p to p − drop in every
    case with `power`, for the one-sided test the chosen gate uses."""
    if not 0 < drop <= p:
        raise IronbenchError(f"--drop {drop}: must be above 0 and at most --p {p} (a rate cannot fall below 0)")
    found = runs_needed(p, drop, cases, alpha, power, gate, MAX_RUNS)
    test = ("one-sided Fisher exact test" if cases == 1 else
            f"one-sided Fisher exact test per case at alpha/{cases} (min-p adjustment needs no more)"
            if gate == "cases" else f"one-sided exact test stratified by case over {cases} cases (simulated power)")
    answer = {"p": p, "drop": drop, "cases": cases, "alpha": alpha, "power": power, "gate": gate, "test": test,
              "runs_per_case": None, "power_reached": None, "curve": []}
    if found is not None:
        answer["runs_per_case"], answer["power_reached"] = found[0], round(found[1], 4)
    top = found[0] if found else MAX_RUNS
    for n in sorted({max(2, top // 4), max(2, top // 2), top} | ({2 * top} if 2 * top <= MAX_RUNS else set())):
        answer["curve"].append({"runs_per_case": n, "power": round(_power(p, drop, cases, alpha, gate, n), 4)})
    return answer


def _power(p, drop, cases, alpha, gate, n) -> float:
    if cases == 1 or gate == "cases":
        return fisher_power(n, n, p, p - drop, alpha / (cases if gate == "cases" else 1))
    return stratified_power([(n, n)] * cases, [p] * cases, [p - drop] * cases, alpha)


def format_plan(answer: dict) -> str:
    head = (f"to detect a drop from {answer['p']:.0%} to {answer['p'] - answer['drop']:.0%} success "
            f"in {answer['cases']} case(s) with {answer['power']:.0%} power at alpha {answer['alpha']}")
    if answer["runs_per_case"] is None:
        lines = [f"{head}: more than {MAX_RUNS} runs per case on each side"]
    else:
        lines = [f"{head}: {answer['runs_per_case']} runs per case on each side "
                 f"(power {answer['power_reached']:.0%}; {answer['test']})"]
    lines += [f"  {row['runs_per_case']:>4} runs per case: power {row['power']:.0%}" for row in answer["curve"]]
    return "\n".join(lines)
