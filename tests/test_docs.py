"""The documentation stays true: the flag reference matches the flags, README.md stays one short
page, and no relative link leads nowhere."""

import re

from rnnpb_nmt import flag_reference

from helpers import ROOT

PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target) and ![alt](target)
FENCED = re.compile(r"```.*?```", re.DOTALL)  # a "# comment" in a code block is no heading
CODE = re.compile(FENCED.pattern + r"|`[^`\n]*`", re.DOTALL)  # what looks like a link in code is code


def test_the_flag_reference_is_generated_from_the_current_flags():
    written = (ROOT / "docs" / "flags.md").read_text(encoding="utf-8")
    assert written == flag_reference.markdown(), "docs/flags.md is stale: run `make docs`"


def test_the_readme_is_one_short_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 150, f"README.md has {lines} lines; move the details to docs/"


def relative_links(page):
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]  # not https:, mailto:


def anchors(page):
    """The anchors GitHub gives the headings of ``page``: lower case, punctuation dropped, spaces
    to hyphens (a repeated heading's later anchors, ``-1`` etc., are not needed here)."""
    text = FENCED.sub("", page.read_text(encoding="utf-8"))
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.MULTILINE)}


def leads_somewhere(page, target):
    path, _, anchor = target.partition("#")
    linked = page.parent / path if path else page
    return linked.exists() and not (anchor and linked.suffix == ".md" and anchor not in anchors(linked))


def test_every_relative_link_leads_to_a_file_and_heading():
    broken = [f"{page.relative_to(ROOT)}: {target}" for page in PAGES for target in relative_links(page)
              if not leads_somewhere(page, target)]
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A `code` heading: yes\n[ok](https://example.org) [up](#a-code-heading-yes) [down](#x) "
                    "`[code](nowhere)` [gone](missing.md#part) [here](page.md#a-code-heading-yes) [not](page.md#b)\n")
    links = relative_links(page)
    assert links == ["#a-code-heading-yes", "#x", "missing.md#part", "page.md#a-code-heading-yes", "page.md#b"]
    assert [leads_somewhere(page, t) for t in links] == [True, False, False, True, False]
