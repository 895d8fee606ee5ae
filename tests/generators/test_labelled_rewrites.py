"""The AI-rewrite guard measured on labelled rewrites (tests/fixtures/ai_rewrites/):
precision and recall of its rejections, on the development part it was tuned against and
on the held-out part it never saw, reported separately."""

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from ironbench.generators.ai_validation import validate_rewrite
from ironbench.generators.registry import get_generator

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ai_rewrites"
PARTS = ("development", "held_out")
AI_GENERATORS = ("ai_rewrite", "ai_rephrase_with_focus_shift", "ai_semantic_restatement", "ai_register_shift")
# Every kind of change the issue names, each written at least once.
CHANGE_KINDS = {
    "operation",
    "objects",
    "names",
    "numbers",
    "language_added",
    "language_removed",
    "language_changed",
    "key_output",
    "listed_operation_added",
    "listed_operation_removed",
    "constraint_types",
    "constraint_ranges",
    "constraint_sizes",
    "constraint_storage",
    "constraint_ordering",
    "constraint_uniqueness",
    "constraint_concurrency",
    "constraint_errors",
    "deliverable_examples",
    "deliverable_explanation",
    "deliverable_documentation",
    "deliverable_cli",
    "deliverable_printing",
}
PARAPHRASE_KINDS = {
    "paraphrase_concise",
    "paraphrase_formal",
    "paraphrase_casual",
    "paraphrase_specification",
    "focus_shift",
    "restatement",
    "register_planner",
    "register_executive",
    "register_peer",
}


@dataclass(frozen=True)
class Item:
    part: str
    base: str
    generator: str
    rewrite: str
    reject: bool
    kind: str
    source: str
    reasons: tuple[str, ...]

    def verdict(self) -> list[str]:
        return validate_rewrite(self.base, self.rewrite, get_generator(self.generator).rules)


def load(part: str) -> list[Item]:
    data = yaml.safe_load((FIXTURES / f"{part}.yaml").read_text(encoding="utf-8"))
    return [
        Item(
            part,
            data["bases"][i["base"]],
            i["generator"],
            i["rewrite"],
            i["verdict"] == "reject",
            i["kind"],
            i.get("source", "written"),
            tuple(i.get("reasons", ())),
        )
        for i in data["items"]
    ]


@dataclass(frozen=True)
class Figures:
    caught: int  # task changes rejected
    missed: int  # task changes accepted
    wrongly_rejected: int  # paraphrases rejected
    accepted: int  # paraphrases accepted

    @property
    def precision(self) -> float:
        return self.caught / max(1, self.caught + self.wrongly_rejected)

    @property
    def recall(self) -> float:
        return self.caught / max(1, self.caught + self.missed)

    def __str__(self) -> str:
        return (
            f"precision {self.precision:.3f} ({self.caught} of {self.caught + self.wrongly_rejected} rejections), "
            f"recall {self.recall:.3f} ({self.caught} of {self.caught + self.missed} task changes); "
            f"paraphrases accepted {self.accepted} of {self.accepted + self.wrongly_rejected}"
        )


def figures(items: list[Item]) -> Figures:
    verdicts = [(item.reject, bool(item.verdict())) for item in items]
    return Figures(
        sum(truth and said for truth, said in verdicts),
        sum(truth and not said for truth, said in verdicts),
        sum(said and not truth for truth, said in verdicts),
        sum(not truth and not said for truth, said in verdicts),
    )


ALL = {part: load(part) for part in PARTS}


def test_the_labelled_set_covers_what_the_issue_asks():
    items = ALL["development"] + ALL["held_out"]
    assert len(items) >= 60 and len({i.base for i in items}) >= 8
    assert len(ALL["held_out"]) >= 20
    assert {i.generator for i in items} == set(AI_GENERATORS)
    kinds = {i.kind for i in items}
    assert CHANGE_KINDS <= kinds, CHANGE_KINDS - kinds
    assert PARAPHRASE_KINDS <= kinds, PARAPHRASE_KINDS - kinds
    # the held-out part has task changes and paraphrases of several kinds, not one
    held = ALL["held_out"]
    assert len({i.kind for i in held if i.reject}) >= 10 and len({i.kind for i in held if not i.reject}) >= 5
    assert not {(i.base, i.rewrite) for i in held} & {(i.base, i.rewrite) for i in ALL["development"]}


@pytest.mark.parametrize(
    "item",
    [i for i in ALL["development"] if i.source in ("spec", "issue")],
    ids=lambda i: i.rewrite[:50],
)
def test_every_example_the_spec_and_issue_quote_gets_its_verdict_and_names_its_term(item):
    reasons = item.verdict()
    assert bool(reasons) == item.reject, reasons
    for wanted in item.reasons:
        assert any(wanted in reason for reason in reasons), (wanted, reasons)


def test_precision_and_recall_on_the_development_and_held_out_parts(record_property, capsys):
    measured = {part: figures(items) for part, items in ALL.items()}
    whole = figures(ALL["development"] + ALL["held_out"])
    with capsys.disabled():
        for part, found in measured.items():
            print(f"\nAI-rewrite guard, {part} part ({len(ALL[part])} rewrites): {found}")
        print(f"AI-rewrite guard, both parts: {whole}")
    for part, found in measured.items():
        record_property(f"{part}_precision", round(found.precision, 3))
        record_property(f"{part}_recall", round(found.recall, 3))
    # The issue's bar, on the whole set and on the part the checker was tuned against:
    # at least 95% of task changes rejected, no paraphrase the spec calls acceptable rejected.
    assert whole.recall >= 0.95, whole
    assert measured["development"].recall >= 0.95, measured["development"]
    spec_paraphrases = [i for i in ALL["development"] if i.source == "spec" and not i.reject]
    assert spec_paraphrases and not [i.rewrite for i in spec_paraphrases if i.verdict()]
    # The held-out figures are what the guard does on rewrites nobody tuned it for
    # (0.895 / 0.895 when first measured); a fall below this floor is a regression.
    assert measured["held_out"].recall >= 0.85 and measured["held_out"].precision >= 0.85, measured["held_out"]
