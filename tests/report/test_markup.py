import html
import json
import re

from hypothesis import given
from hypothesis import strategies as st

from ironbench.report.markup import ELIDED, Markup, el, esc, json_script, word_diff_html

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=120)


@given(texts)
def test_text_and_attributes_are_escaped(text):
    element = el("td", {"title": text, "class": "x"}, text)
    assert html.unescape(element[element.index(">") + 1 : -len("</td>")]) == text
    assert "<" not in element[element.index(">") + 1 : -len("</td>")]
    assert re.fullmatch(r'<td title="[^"<>]*" class="x">[^<>]*</td>', element)


def test_markup_built_here_passes_and_raw_strings_never_do():
    inner = el("b", None, "<i>")
    assert el("p", None, inner, "<i>") == "<p><b>&lt;i&gt;</b>&lt;i&gt;</p>"
    assert esc(Markup("<br>")) == "<br>" and esc("<br>") == "&lt;br&gt;"
    assert el("input", {"hidden": True, "value": None}) == "<input hidden>"


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | texts,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
        max_leaves=12,
    )
)
def test_embedded_json_cannot_close_its_element_and_reads_back(data):
    script = json_script(data, "report-data")
    body = script[script.index(">") + 1 : -len("</script>")]
    assert "<" not in body and ">" not in body
    assert json.loads(body) == data


def _plain(diff: str, keep: str) -> str:
    """The text a diff shows, keeping <ins> (the variant) or <del> (the base) parts."""
    drop = "del" if keep == "ins" else "ins"
    text = re.sub(rf"<{drop}>.*?</{drop}>", "", diff, flags=re.DOTALL)
    return html.unescape(re.sub(r"</?(ins|del)>", "", text)).replace("·", " ").replace("⏎", "").replace("⇥", "\t")


words = st.lists(st.sampled_from(["cache", "get", "set", "size", "a", "<b>", "&", "Write", "simple"]), max_size=12)


@given(words, words, st.sampled_from([" ", "  ", "\n"]))
def test_word_diff_shows_both_texts(base_words, variant_words, gap):
    base, variant = " ".join(base_words), gap.join(variant_words)
    diff = word_diff_html(base, variant)
    assert _plain(diff, "ins") == variant and _plain(diff, "del") == base


def test_elided_diff_keeps_the_change_and_its_context():
    base = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    variant = base.replace("seven", "SEVEN")
    diff = word_diff_html(base, variant, context=2)
    assert diff == f"{ELIDED} five six <del>seven</del><ins>SEVEN</ins> eight nine {ELIDED}"
    assert word_diff_html("a b", "a c", context=2) == "a <del>b</del><ins>c</ins>"
