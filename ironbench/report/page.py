"""Page assembly: header with the verdicts, the sections a run has, its metadata, the
embedded data, and the page's own style and script (static files, inlined and allowed by
hash; the viewer serves the same files)."""

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ironbench import __version__
from ironbench.core.outcome_codes import BY_CODE
from ironbench.report.embedded import embedded
from ironbench.report.listing import listed
from ironbench.report.markup import Markup, el, join, json_script
from ironbench.report.records import ReportData, RunMeta, Verdict
from ironbench.report.sections.adversarial import adversarial
from ironbench.report.sections.baseline import baseline
from ironbench.report.sections.compare import compare
from ironbench.report.sections.correctness import checks
from ironbench.report.sections.cost import cost
from ironbench.report.sections.gate import gate
from ironbench.report.sections.gauntlet import gauntlet
from ironbench.report.sections.imported import imported
from ironbench.report.sections.model import model
from ironbench.report.sections.outcomes import outcomes
from ironbench.report.sections.robustness import robustness
from ironbench.report.sections.stress import stress
from ironbench.report.sections.survival import survival
from ironbench.report.verdict import origin
from ironbench.report.widgets import number, outcome_css, section


def _static(name: str) -> str:
    return resources.files("ironbench.report").joinpath("static", name).read_text(encoding="utf-8")


CSS = _static("report.css") + outcome_css()
SCRIPT = _static("report.js")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Nothing loads from anywhere; only this page's own style and script run. Even markup
# that slipped past escaping could neither fetch nor execute anything.
CSP = (
    f"default-src 'none'; style-src '{_sha256(CSS)}'; script-src '{_sha256(SCRIPT)}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


@dataclass(frozen=True)
class Part:
    """A section of the page: its id, its title in the navigation, and how it is drawn from the data."""

    key: str
    title: str
    draw: Callable[[ReportData], Markup | None]


def _present(render: Callable[[Any], Markup], value: Any) -> Markup | None:
    return render(value) if value else None


# The sections a run may have, in page order (between the verdict and the metadata).
SECTIONS = (
    Part("imported", "Imported", lambda d: _present(imported, d.imported)),
    # verified but wrong first: the runs whose success every other section counts
    Part("checks", "Verified but wrong", lambda d: _present(checks, d.checks)),
    Part("gate", "Gate", lambda d: _present(gate, d.gate)),
    Part("compare", "Compare", lambda d: _present(compare, d.compare)),
    Part("outcomes", "Outcomes", lambda d: _present(outcomes, d.outcomes)),
    Part("model", "Model traffic", lambda d: _present(model, d.model)),
    Part("cost", "Cost", lambda d: cost(d.cost, d.compare) if d.cost else None),
    Part("baseline", "Baseline", lambda d: _present(baseline, d.baseline)),
    Part("adversarial", "Adversarial", lambda d: _present(adversarial, d.adversarial)),
    Part("robustness", "Robustness", lambda d: _present(robustness, d.robustness)),
    Part("stress", "Stress", lambda d: _present(stress, d.stress)),
    Part("gauntlet", "Gauntlet", lambda d: _present(gauntlet, d.gauntlet)),
    Part("survival", "When conversations break", lambda d: _present(survival, d.survival)),
)


def _header(data: ReportData) -> Markup:
    run = data.run
    facts: list[Any] = [run.suite_id, run.mode, run.status, f"started {run.started_utc}"]
    if run.finished_utc:
        facts.append(f"ended {run.finished_utc}")
    if data.outcomes:
        counted = sum(row.runs for row in data.outcomes if _evidence(row.code))
        facts.append(f"{counted} invocations")
        excluded = sum(row.runs for row in data.outcomes if not _evidence(row.code))
        if excluded:
            facts[-1] += f" (+{excluded} excluded: harness or infrastructure errors)"
    if run.label:
        facts.insert(0, f"label {run.label}")
    if data.imported:
        facts.insert(0, f"imported from {origin(data.imported)}")
    if isinstance(run.environment, dict) and run.environment:
        facts.append("recorded " + ", ".join(f"{k}={v}" for k, v in run.environment.items()))
    title = f"ironbench report: {run.run_id}"
    if data.compare:
        title = f"ironbench comparison: {data.compare.comparison.run_a} → {data.compare.comparison.run_b}"
    return el("header", None, el("h1", None, title), el("p", None, " · ".join(str(f) for f in facts if f)))


def _evidence(code: str) -> bool:
    return code in BY_CODE and BY_CODE[code].evidence


def _verdict(items: list[Verdict]) -> Markup:
    if not items:
        return section("verdict", "Verdict", "Nothing recorded yet to judge.")
    return section(
        "verdict",
        "Verdict",
        None,
        el(
            "ul",
            {"class": "verdicts"},
            [
                el(
                    "li",
                    {"data-mode": v.mode},
                    el("b", None, v.headline),
                    " ",
                    el("span", {"class": "evidence"}, v.evidence),
                )
                for v in items
            ],
        ),
    )


def _value(value: Any) -> Markup | str:
    if value is None or value == "" or value == {} or value == []:
        return "–"
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return " ".join(str(v) for v in value)
    if isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
        return join([el("span", {"class": "kv"}, f"{k} = {'(unset)' if v is None else v}") for k, v in value.items()])
    if isinstance(value, (dict, list)):
        return el("pre", None, json.dumps(value, indent=2, ensure_ascii=False, default=str))
    return number(value, 4) if isinstance(value, float) else str(value)


# Shown first, in this order: what was run, on what, and under which name.
FIRST = ("run_id", "label", "suite_id", "mode", "status", "target", "ironclad_version", "environment")


def _metadata(run: RunMeta, cut: bool) -> Markup:
    recorded = run.recorded
    keys = [k for k in FIRST if k in recorded] + [k for k in recorded if k not in FIRST]
    rows = [[el("dt", None, key), el("dd", None, _value(recorded[key]))] for key in keys]
    return section(
        "metadata",
        "Run metadata",
        "What was run, on what, by which versions: everything the run recorded when it started, "
        "its label and the environment variables its suite named (record_env) included.",
        el("dl", {"class": "meta"}, rows),
        el(
            "p",
            {"class": "intro"},
            "The data behind this page, the suite as recorded included, is "
            "embedded in it as JSON (the element with id ",
            el("code", None, "report-data"),
            "): open the page source, or read it with any HTML parser."
            + (
                " Of a run too large to list whole, it holds the groups this page lists; "
                "the store holds every one (`ironbench query`, `ironbench log`)."
                if cut
                else ""
            ),
        ),
    )


@dataclass(frozen=True)
class PageParts:
    """A report page's pieces, in page order: what `render` assembles into the self-contained
    file, and what the viewer (ironbench/view) places in its own pages around its live parts."""

    title: str  # the document's <title>
    header: Markup  # <header>: what was run, and its facts
    sections: list[tuple[str, str, Markup]]  # (id, navigation title, <section>): verdict first, metadata last


def parts(data: ReportData, items: list[Verdict]) -> PageParts:
    """Every section the run's data has, rendered, the rows of single groups as
    `listing.listed` keeps them; no page around them."""
    return _parts(listed(data), items)


def _parts(data: ReportData, items: list[Verdict]) -> PageParts:
    shown = [("verdict", "Verdict", _verdict(items))]
    for part in SECTIONS:
        drawn = part.draw(data)
        if drawn is not None:
            shown.append((part.key, part.title, drawn))
    sections = (data.compare, data.baseline, data.adversarial, data.stress, data.gauntlet, data.model)
    cut = any(s is not None and s.left_out is not None for s in sections)
    shown.append(("metadata", "Metadata", _metadata(data.run, cut)))
    return PageParts(f"ironbench · {data.run.run_id} · {data.run.mode}", _header(data), shown)


def render(data: ReportData, items: list[Verdict]) -> str:
    """The whole self-contained page: verdicts and aggregates over the whole run, the rows
    of single groups as `listing.listed` keeps them."""
    data = listed(data)
    page = _parts(data, items)
    nav = el(
        "nav", {"aria-label": "sections"}, [el("a", {"href": f"#{key}"}, title) for key, title, _ in page.sections]
    )
    head = el(
        "head",
        None,
        Markup('<meta charset="utf-8">'),
        el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        el("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}),
        el("meta", {"name": "generator", "content": f"ironbench {__version__}"}),
        el("title", None, page.title),
        Markup(f"<style>{CSS}</style>"),
    )
    html = el(
        "html",
        {"lang": "en"},
        head,
        el(
            "body",
            None,
            page.header,
            nav,
            el("main", None, [body for _, _, body in page.sections]),
            el(
                "footer",
                None,
                f"Written by ironbench {__version__} from the event store; "
                "self-contained: no network, readable with scripts off.",
            ),
            json_script(embedded(data, items), "report-data"),
            Markup(f"<script>{SCRIPT}</script>"),
        ),
    )
    return "<!doctype html>\n" + html + "\n"
