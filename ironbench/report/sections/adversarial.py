"""Adversarial: how sensitive is it to wording? The case × generator heatmap, each generator
across cases, every variant as a word diff with its decision, the generators that made fewer
variants than asked and why, and the AI rewrites rejected."""

from ironbench.core.kinds import MATERIAL
from ironbench.report import svg
from ironbench.report.markup import Markup, el, join, word_diff_html
from ironbench.report.records import AdversarialCase, AdversarialSection, Decision, Variant
from ironbench.report.verdict import not_evidence, reference_text
from ironbench.report.widgets import (
    Col,
    Td,
    also,
    decision_cell,
    figure,
    interval,
    left_out,
    runs_cell,
    section,
    strip,
    table,
)

OPEN_LIMIT = 40  # collapsible groups with more items than this start closed
CONTEXT = 5  # words of unchanged instruction kept on each side of a change
# keyed by str | None: a variant without a decision (None) sorts after every decided one
_SEVERITY: dict[str | None, int] = {"structural": 0, "stochastic": 1, "within_noise": 2, "not_material": 3}


def _superseded(variant: Variant) -> str:
    """A variant's name, and any attempt of it a re-run superseded (a backend outage)."""
    name = variant.variant_id or ""
    return f"{name} (+{variant.superseded} superseded)" if variant.superseded else name


def _way(decision: Decision | None) -> tuple[str, str]:
    """Which way a variant differed, and the test behind it when there was one."""
    if decision is None:
        return "", ""
    way = decision.direction or ""
    if decision.p_value is not None:
        way += f" (p = {decision.p_value:.2g})"
    return way, way


def adversarial(data: AdversarialSection) -> Markup:
    parts = []
    if data.cells:
        parts += _across(data)
    details = [_case(case, len(data.cases)) for case in data.cases]
    if details:
        parts.append(
            el("div", {"class": "group"}, el("h3", None, "Variants"), details, left_out(data.left_out, "cases"))
        )
    if data.rejections:
        parts.append(_rejections(data))
    return section(
        "adversarial",
        "Adversarial: how sensitive is it to wording?",
        "Each variant runs once; one whose outcome differs from the reference is repeated up to 3 times: "
        "a repeat that agrees makes the difference stochastic, three that all differ make it structural, "
        "and each says which way it went. Against a baseline that never settled, a difference its own "
        "runs explain is within noise." + also(not_evidence(data.excluded)),
        *parts,
    )


def _across(data: AdversarialSection) -> list[Markup]:
    """The heatmap and the table per generator."""
    case_ids = list(dict.fromkeys(c.case_id for c in data.cells))
    generators = [g.generator for g in data.generators]
    grid = [
        svg.Cell(
            c.case_id,
            c.generator,
            c.material / c.variants,
            f"{c.material}/{c.variants}",
            f"{c.case_id} × {c.generator}: {c.material} of {c.variants} variants changed the outcome"
            + "".join(
                f"; {count} {kind.replace('_', ' ')}"
                for kind, count in (
                    ("structural", c.structural),
                    ("stochastic", c.stochastic),
                    ("within_noise", c.within_noise),
                )
                if count
            ),
        )
        for c in data.cells
    ]
    rows_note = data.heatmap_left_out
    heatmap = figure(
        svg.heatmap(case_ids, generators, grid, "Material-change rate, case × generator"),
        "Share of variants whose outcome differed materially from the baseline "
        "(stochastic or structural); darker is more sensitive."
        + (
            f" Rows: the {rows_note.listed} most sensitive of {rows_note.of:,} cases; every case: {rows_note.see}."
            if rows_note
            else ""
        ),
    )
    per_generator = table(
        [
            Col("generator"),
            Col("variants", True),
            Col("material", True),
            Col("structural", True),
            Col("stochastic", True),
            Col("within noise", True, "differed, but no more than an unstable baseline's own runs do"),
            Col("which way"),
            Col("material-change rate", True),
            Col("95% CI", True),
        ],
        [
            [
                g.generator,
                (str(g.variants), g.variants),
                (str(g.material), g.material),
                (str(g.structural), g.structural),
                (str(g.stochastic), g.stochastic),
                (str(g.within_noise), g.within_noise),
                ", ".join(f"{way} ({count})" for way, count in sorted(g.directions.items())),
                (f"{g.rate:.0%}", round(g.rate, 4)),
                interval(g.low, g.high),
            ]
            for g in data.generators
        ],
        caption="Per generator, across cases",
    )
    return [heatmap, per_generator]


def _case(case: AdversarialCase, cases: int) -> Markup:
    """A case's base, its reference, and its variants as word diffs against the base."""
    variants = sorted(case.variants, key=lambda v: (_SEVERITY.get(v.decided, 4), v.generator, v.variant_id or ""))
    material = sum(1 for v in variants if v.decided in MATERIAL)
    reference = case.reference
    ref = el(
        "p",
        None,
        "Judged against ",
        reference_text(reference),
        join([" — ", strip(case.reference_codes)]) if case.reference_codes else None,
        ". The baseline never settled, so a variant whose first run differs from its most common outcome "
        "runs 4 times and is compared with every one of its outcomes (exact permutation test)."
        if reference and reference.reference_unstable
        else ".",
    )
    models = any(v.model for v in variants)
    model_col = [Col("model")] if models else []
    same = [v for v in variants if v.decided == "not_material"]
    moved = [v for v in variants if v not in same]

    def diff(v: Variant) -> Td:
        return Td(word_diff_html(case.instruction, v.instruction, CONTEXT), cls="diff")

    body = [
        el("p", {"class": "base"}, el("b", None, "Base: "), el("span", {"class": "text"}, case.instruction)),
        ref,
    ]
    if moved:
        body.append(
            table(
                [
                    Col("variant"),
                    Col("decision"),
                    Col("which way"),
                    Col("runs"),
                    Col("instruction, as a word diff against the base"),
                ]
                + model_col,
                [
                    [
                        v.variant_id,
                        decision_cell(v.decided),
                        _way(v.decision),
                        runs_cell(v.codes, v.superseded),
                        diff(v),
                    ]
                    + ([v.model or ""] if models else [])
                    for v in moved
                ],
                filterable=True,
                caption="Variants whose outcome differed from the reference (or not decided yet)",
            )
        )
    if same:
        body.append(
            table(
                [Col("variant"), Col("instruction, as a word diff against the base")] + model_col,
                [[_superseded(v), diff(v)] + ([v.model or ""] if models else []) for v in same],
                filterable=True,
                caption="Variants whose first run matched the reference (not material)",
            )
        )
    if case.shortfalls:
        body.append(
            table(
                [Col("generator"), Col("asked", True), Col("made", True), Col("why no more")],
                [
                    [short.generator, (str(short.asked), short.asked), (str(short.made), short.made), short.reason]
                    for short in case.shortfalls
                ],
                caption="Generators that made fewer variants than asked: fewer wordings behind this case's figures",
            )
        )
    if case.dropped:
        body.append(
            table(
                [Col("generator"), Col("reason"), Col("candidate")],
                [[d.generator, d.reason or "", Td(d.instruction, cls="text")] for d in case.dropped],
                caption="Candidates dropped for breaking the single-string contract",
            )
        )
    not_listed = case.not_listed or 0
    return el(
        "details",
        {"open": len(variants) <= OPEN_LIMIT and cases <= 10},
        el(
            "summary",
            None,
            el("b", None, case.case_id),
            f" — {len(variants) + not_listed} variants, {material} changed the outcome materially"
            + (f" (the {not_listed} that did not are not listed)" if not_listed else "")
            + _fewer(case),
        ),
        body,
    )


def _fewer(case: AdversarialCase) -> str:
    """The case's summary's word on generators that made fewer variants than asked."""
    if not case.shortfalls:
        return ""
    return "; fewer than asked: " + ", ".join(f"{s.generator} {s.made} of {s.asked}" for s in case.shortfalls)


def _rejections(data: AdversarialSection) -> Markup:
    rows = [
        [
            r.case_id,
            r.variant_id,
            (str(r.attempt), r.attempt),
            r.model,
            Td(r.ai_output, cls="text"),
            el("ul", {"class": "reasons"}, [el("li", None, reason) for reason in r.failure_reasons]),
        ]
        for r in data.rejections
    ]
    return el(
        "div",
        {"class": "group"},
        el("h3", None, "AI rewrites the harness rejected"),
        table(
            [
                Col("case"),
                Col("variant slot"),
                Col("attempt", True),
                Col("model"),
                Col("rejected output"),
                Col("reasons"),
            ],
            rows,
            filterable=True,
        ),
        left_out(data.rejections_left_out, "rejected rewrites"),
    )
