"""Page assembly: header with the verdicts, the sections a run has, its metadata, the
embedded data, and the inline style and script (allowed by hash, nothing else)."""

import base64
import hashlib
import json
from dataclasses import dataclass

from ironbench import __version__
from ironbench.report import comparison, field, sections, transcripts
from ironbench.report.gather import EVIDENCE_CODES, for_embedding
from ironbench.report.listing import listed
from ironbench.report.markup import Markup, el, join, json_script
from ironbench.report.verdict import Verdict
from ironbench.report.widgets import number, outcome_css, section

CSS = """
:root{--ink:#1f2328;--muted:#5f6b76;--line:#e1e4e8;--bad:#c62828;--ok:#2e7d32;--warn:#ef6c00;--link:#0b5cad}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);margin:0;background:#f6f7f9}
header{background:#1f2933;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px;font-weight:600}
header p{margin:4px 0 0;color:#cbd2d9}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid var(--line);padding:6px 24px;z-index:2}
nav a{margin-right:16px;color:var(--link);text-decoration:none}
main{padding:4px 24px 40px;max-width:1500px}
section{background:#fff;border:1px solid var(--line);border-radius:6px;padding:10px 18px;margin:14px 0}
h2{font-size:18px;margin:4px 0 6px}
h3{font-size:15px;margin:14px 0 6px}
h3 small{font-weight:400;color:var(--muted)}
.intro,figcaption,.evidence{color:var(--muted)}
figure{margin:10px 0}
.scroll{overflow-x:auto}
.row{display:flex;gap:18px;flex-wrap:wrap;align-items:flex-start}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
caption{text-align:left;color:var(--muted);padding:2px 0}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f4f6;font-weight:600;white-space:nowrap}
.js th{cursor:pointer}
th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
td.text{min-width:20ch;max-width:70ch}
td.reason{min-width:28ch;max-width:50ch}
td.strip,.strip{white-space:nowrap}
.diff{white-space:pre-wrap;overflow-wrap:anywhere;display:inline-block;max-width:80ch}
del{background:#fde2e2;color:#8a1c1c}
ins{background:#d9f5e1;color:#14532d;text-decoration:none}
.strip b{font-weight:700;letter-spacing:1px}
.badge{display:inline-block;border-radius:10px;padding:0 7px;font-size:12px;background:#eef0f3;border:1px solid #d5d9de;
white-space:nowrap}
td.dec{text-align:center;font-size:12px}
.badge.bad,.d-structural,.d-systematic_failure,.d-boundary,.d-exhausted{background:#fde2e2;border-color:#f0a8a8}
.badge.ok,.d-stable,.d-not_material,.d-systematic_success,.d-no_boundary,.d-reference{background:#e2f5e7;
border-color:#9fd8ae}
.d-stochastic,.d-mixed,.d-tentative{background:#fff1dc;border-color:#f0c47a}
.d-fails_at_base{background:#fde2e2;border-color:#f0a8a8}
.d-within_noise{background:#eef3fb;border-color:#b5c9e8}
ul.verdicts{padding-left:20px}
ul.verdicts li{margin:6px 0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:12px}
.card{border:1px solid var(--line);border-radius:6px;padding:6px 12px}
.card.v-boundary,.card.v-fails_at_base{border-color:#f0a8a8}
.card.v-tentative{border-color:#f0c47a}
.card .said{margin:4px 0}
h4{font-size:14px;margin:12px 0 4px}
.maplabel{margin:0;color:var(--muted);font-size:12px}
details{margin:6px 0}
summary{cursor:pointer}
.transcript{padding-left:30px}
.turn{padding:4px 8px;margin:4px 0;border-left:4px solid transparent}
.turn.violated{background:#fde2e2;border-left-color:var(--bad)}
.turn.flagged{background:#fff4e0;border-left-color:var(--warn)}
.turn p{margin:2px 0}
.verdicts .badge{margin-right:4px}
.phrase{color:var(--muted)}
.gate{border-radius:6px;padding:4px 12px;margin:8px 0}
.gate.bad{background:#fde2e2}
.gate.ok{background:#e2f5e7}
.gate p{margin:4px 0}
.kv{display:inline-block;margin-right:8px;font-family:ui-monospace,monospace;font-size:12px}
.legend .key{margin-right:10px;white-space:nowrap}
.reasons{margin:0;padding-left:16px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}
dt{color:var(--muted)}
dd{margin:0;overflow-wrap:anywhere}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:420px;font-size:12px}
input.filter{margin:6px 0 0;padding:3px 6px;width:280px}
.toggles button{font:inherit;font-size:12px}
footer{color:var(--muted);padding:0 24px 24px}
.left-out{background:#fff8e1;border-left:4px solid var(--warn);padding:4px 10px}
""" + outcome_css()

SCRIPT = """
(function(){
var doc=document,each=function(list,f){Array.prototype.forEach.call(list,f);};
doc.documentElement.className+=' js';
function key(td){var v=td.getAttribute('data-v');return v!==null?v:td.textContent.trim();}
each(doc.querySelectorAll('table.sortable'),function(table){
  var heads=table.tHead.rows[0].cells;
  each(heads,function(th,i){
    th.tabIndex=0;
    function sort(){
      var numeric=th.hasAttribute('data-numeric'),asc=th.getAttribute('aria-sort')!=='ascending';
      each(heads,function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=key(a.cells[i]),y=key(b.cells[i]);
        var r=numeric?(parseFloat(x)||0)-(parseFloat(y)||0):x.localeCompare(y,undefined,{numeric:true});
        return asc?r:-r;});
      each(rows,function(r){body.appendChild(r);});
    }
    th.addEventListener('click',sort);
    th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sort();}});
  });
});
each(doc.querySelectorAll('table.filterable'),function(table){
  var input=doc.createElement('input'),holder=table.parentNode;
  input.type='search';input.className='filter';input.placeholder='Filter rows';
  input.setAttribute('aria-label','Filter rows');
  holder.parentNode.insertBefore(input,holder);
  input.addEventListener('input',function(){
    var q=input.value.toLowerCase();
    each(table.tBodies[0].rows,function(r){r.hidden=q!==''&&r.textContent.toLowerCase().indexOf(q)<0;});
  });
});
each(doc.querySelectorAll('.group'),function(group){
  var all=group.querySelectorAll(':scope>details');
  if(all.length<2)return;
  var bar=doc.createElement('p');bar.className='toggles';
  [['Expand all',true],['Collapse all',false]].forEach(function(p){
    var b=doc.createElement('button');b.type='button';b.textContent=p[0];
    b.addEventListener('click',function(){each(all,function(d){d.open=p[1];});});
    bar.appendChild(b);bar.appendChild(doc.createTextNode(' '));
  });
  var title=group.querySelector('h3');group.insertBefore(bar,title?title.nextSibling:group.firstChild);
});
})();
"""


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Nothing loads from anywhere; only this page's own style and script run. Even markup
# that slipped past escaping could neither fetch nor execute anything.
CSP = (
    f"default-src 'none'; style-src '{_sha256(CSS)}'; script-src '{_sha256(SCRIPT)}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

TITLES = {
    "verdict": "Verdict",
    "compare": "Compare",
    "outcomes": "Outcomes",
    "baseline": "Baseline",
    "adversarial": "Adversarial",
    "robustness": "Robustness",
    "stress": "Stress",
    "gauntlet": "Gauntlet",
    "survival": "When conversations break",
    "metadata": "Metadata",
}


def _header(data: dict) -> Markup:
    run = data["run"]
    facts = [run.get("suite_id"), run.get("mode"), run.get("status"), f"started {run.get('started_utc')}"]
    if run.get("finished_utc"):
        facts.append(f"ended {run['finished_utc']}")
    rows = data.get("outcomes", [])
    counted = sum(row["runs"] for row in rows if row["code"] in EVIDENCE_CODES)
    if rows:
        facts.append(f"{counted} invocations")
        excluded = sum(row["runs"] for row in rows if row["code"] not in EVIDENCE_CODES)
        if excluded:
            facts[-1] += f" (+{excluded} excluded: harness or infrastructure errors)"
    if run.get("label"):
        facts.insert(0, f"label {run['label']}")
    environment = run.get("environment")
    if isinstance(environment, dict) and environment:
        facts.append("recorded " + ", ".join(f"{k}={v}" for k, v in environment.items()))
    title = f"ironbench report: {run['run_id']}"
    if "compare" in data:
        title = f"ironbench comparison: {data['compare']['run_a']} → {data['compare']['run_b']}"
    return el("header", None, el("h1", None, title), el("p", None, " · ".join(str(f) for f in facts if f)))


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


def _value(value) -> Markup | str:
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


def _metadata(data: dict) -> Markup:
    run = data["run"]
    keys = [k for k in FIRST if k in run] + [k for k in run if k not in FIRST]
    rows = [[el("dt", None, key), el("dd", None, _value(run[key]))] for key in keys]
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
                if any(isinstance(data.get(k), dict) and "left_out" in data[k] for k in TITLES)
                else ""
            ),
        ),
    )


def _compact(value):
    """The embedded data, made smaller for reading, not recomputing (the store keeps
    everything): floats to 4 decimals, no null fields, and a list of records as one
    table, {"columns": [...], "rows": [[...], ...]}, so field names are not repeated."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        if len(value) > 1 and all(isinstance(v, dict) for v in value):
            return _table([_flat(record) for record in value])
        return [_compact(v) for v in value]
    return value


def _flat(record: dict) -> dict:
    """A record's nested records (a group's decision) as dotted fields: `decision.reason`."""
    flat = {}
    for key, value in record.items():
        if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def _table(records: list[dict]) -> dict:
    columns = list(dict.fromkeys(k for record in records for k in record if record[k] is not None))
    return {"columns": columns, "rows": [[_compact(record.get(k)) for k in columns] for record in records]}


@dataclass(frozen=True)
class PageParts:
    """A report page's pieces, in page order: what `render` assembles into the self-contained
    file, and what the viewer (ironbench/view) places in its own pages around its live parts."""

    title: str  # the document's <title>
    header: Markup  # <header>: what was run, and its facts
    sections: list[tuple[str, str, Markup]]  # (id, navigation title, <section>): verdict first, metadata last


def parts(data: dict, items: list[Verdict]) -> PageParts:
    """Every section the run's data has, rendered, the rows of single groups as
    `listing.listed` keeps them; no page around them."""
    return _parts(listed(data), items)


def _parts(data: dict, items: list[Verdict]) -> PageParts:
    shown = [("verdict", TITLES["verdict"], _verdict(items))]
    for key, render_section in (
        ("compare", comparison.compare),
        ("outcomes", sections.outcomes),
        ("baseline", sections.baseline),
        ("adversarial", sections.adversarial),
        ("robustness", field.robustness),
        ("stress", sections.stress),
        ("gauntlet", transcripts.gauntlet),
        ("survival", field.survival),
    ):
        if data.get(key):
            shown.append((key, TITLES[key], render_section(data[key])))
    shown.append(("metadata", TITLES["metadata"], _metadata(data)))
    run = data["run"]
    return PageParts(f"ironbench · {run['run_id']} · {run.get('mode')}", _header(data), shown)


def render(data: dict, items: list[Verdict]) -> str:
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
            json_script(_compact({**for_embedding(data), "verdicts": [v.__dict__ for v in items]}), "report-data"),
            Markup(f"<script>{SCRIPT}</script>"),
        ),
    )
    return "<!doctype html>\n" + html + "\n"
