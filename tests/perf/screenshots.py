"""PNG screenshots of example reports, for people reviewing a change to the report
(not collected by pytest). Run: python tests/perf/screenshots.py [--dir DIR]

Builds the test examples (a baseline run, an adversarial run with AI rewrites the
harness rejected, a stress run, a gauntlet run, and a comparison) against scripted
targets, writes their reports, and photographs each whole page in headless Chromium.
"""

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import llm

from ironbench.report import write_report
from tests.fixtures import llm_scripted
from tests.report.chromium import Chromium
from tests.report.examples import build_examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--dir",
        type=Path,
        default=REPO / "outputs" / "screenshots",
        help="Where the PNGs (and the HTML reports beside them) go.",
    )
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    llm.plugins.pm.register(llm_scripted, name="ironbench-tests-scripted")
    with tempfile.TemporaryDirectory() as tmp:
        examples = build_examples(Path(tmp) / "out", llm_scripted.ScriptedRewriter)
        store, out = examples.paths.store_path, examples.paths.out_dir
        pages = {kind: (getattr(examples, kind), None) for kind in ("baseline", "adversarial", "stress", "gauntlet")}
        pages["compare"] = (examples.baseline_regressed, examples.baseline)
        with Chromium() as browser:
            for kind, (run_id, base) in pages.items():
                html = write_report(store, out, run_id, base, output=args.dir / f"{kind}.html").path
                page = browser.open(html, width=args.width)
                problems = page.problems()
                page.screenshot(args.dir / f"{kind}.png")
                page.close()
                print(f"{args.dir / f'{kind}.png'}{'  PROBLEMS: ' + '; '.join(problems) if problems else ''}")


if __name__ == "__main__":
    main()
