"""How many distinct variants lexical_shuffle and synonym_substitution deliver when a suite
asks each for `count: 10` (issue #40), on four sets of instructions (not collected by
pytest): the development part (tests/fixtures/instructions/development.yaml), the held-out
part (held_out.yaml), the first sentences of the 164 HumanEval docstrings, and the spec's own
example. Variants are made as a run makes them (the planner's generate_variants: duplicates
skipped, contract breakers dropped).

Run: python tests/perf/wording_figures.py [--show N]   (--show prints N variants per instruction)
"""

import argparse
import ast
import re
import statistics
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ironbench.core.contract import forbidden_word
from ironbench.run.planner import generate_variants
from ironbench.suite.humaneval import problems
from ironbench.suite.models import AdversarialCase, parse_suite

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "instructions"
SPEC_EXAMPLE = "Compile a list of email patterns into regex objects."
GENERATORS = ("lexical_shuffle", "synonym_substitution")
COUNT = 10


def instruction_set(part: str) -> list[str]:
    return yaml.safe_load((FIXTURES / f"{part}.yaml").read_text(encoding="utf-8"))["instructions"]


def humaneval_first_sentences() -> list[str]:
    """The first sentence of each problem's docstring, its line breaks joined (those the
    single-string contract refuses left out, as a suite would refuse them)."""
    sentences = []
    for problem in problems():
        tree = ast.parse(problem["prompt"])
        entry = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == problem["entry_point"])
        prose = re.split(r"\n\s*\n|>>>|\n\s*(?:for )?examples?\b", ast.get_docstring(entry) or "", flags=re.IGNORECASE)[
            0
        ]
        prose = " ".join(prose.split())
        match = re.match(r"(.+?[.!?])(?:\s|$)", prose)
        sentence = match.group(1) if match else prose
        if sentence and forbidden_word(sentence) is None:
            sentences.append(sentence)
    return sentences


def distinct_variants(instruction: str, generator: str, seed: int) -> list[str]:
    data = {
        "suite_id": "figures",
        "mode": "adversarial",
        "cases": [
            {
                "id": "c",
                "instruction": instruction,
                "generators": [{"generator": generator, "count": COUNT, "seed": seed}],
            }
        ],
    }
    case = parse_suite(data, "figures.yaml").cases[0]
    assert isinstance(case, AdversarialCase)
    variants, _drops = generate_variants(case)
    return [v.instruction for v in variants]


def figures(instructions: list[str], show: int) -> dict[str, list[int]]:
    counts: dict[str, list[int]] = {g: [] for g in GENERATORS}
    for index, instruction in enumerate(instructions):
        for generator in GENERATORS:
            made = distinct_variants(instruction, generator, seed=index + 1)
            counts[generator].append(len(made))
            if show:
                print(f"  [{generator}] {instruction}")
                for variant in made[:show]:
                    print(f"      {variant}")
    return counts


def share(counts: list[int], at_least: int) -> str:
    hits = sum(c >= at_least for c in counts)
    return f"{hits}/{len(counts)} ({100 * hits / len(counts):.0f}%)"


def report(name: str, counts: dict[str, list[int]]) -> None:
    shuffle, synonyms = counts["lexical_shuffle"], counts["synonym_substitution"]
    print(f"{name} ({len(shuffle)} instructions, count: {COUNT})")
    print(
        f"  lexical_shuffle:      >=1 {share(shuffle, 1)}, >=3 {share(shuffle, 3)}, "
        f"median {statistics.median(shuffle):g}, none {sum(c == 0 for c in shuffle)}"
    )
    print(
        f"  synonym_substitution: >=5 {share(synonyms, 5)}, >=1 {share(synonyms, 1)}, "
        f"median {statistics.median(synonyms):g}, none {sum(c == 0 for c in synonyms)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=0, help="print this many variants per instruction")
    parser.add_argument("--set", choices=["development", "held_out", "humaneval", "spec"], action="append")
    args = parser.parse_args()
    sets = {
        "development": lambda: instruction_set("development"),
        "held_out": lambda: instruction_set("held_out"),
        "humaneval": humaneval_first_sentences,
        "spec": lambda: [SPEC_EXAMPLE],
    }
    for name in args.set or list(sets):
        report(name, figures(sets[name](), args.show))


if __name__ == "__main__":
    main()
