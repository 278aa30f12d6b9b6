"""The user docs speak the users' language: no word of the project's own making-of (its issues, rounds of
work, cards and reruns) in README.md or docs/, and README's first 40 lines say what the sink is, how to
install it, and show a first write."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Maintainer words, each with what a user reads there instead. Words users use too stay allowed:
#: "helper" (spark_kpl's Python helpers), "round trip", "re-run" (running a job again).
MAINTAINER_WORDS = {
    r"\bthe launcher\b": "users know the daemon's start script by its name, `launch-daemon`",
    r"\bthe (rerun|main run)\b": "say what the run did differently (its flush spacing, its load)",
    r"\brerun it\b": "a note to maintainers: say what is measured and what is not",
    r"\b(this|that|last|earlier|previous|next|first|second|third) round\b": "a round of the project's work: "
                                                                               "give the date or the version",
    r"\bissue #\d+": "users cannot see the project's issues: say what changed",
    r"\bdesign card\b": "a maintainers' note: say the decision itself (docs/design-decisions.md)",
    r"\b(TODO|FIXME|XXX)\b": "unfinished work belongs in the CHANGELOG's plans or an issue, not in the docs",
    r"\bsession \d+\b": "a maintainers' work session",
    r"\bthe brief\b": "a maintainers' work order",
    r"\bwaves?\b": "a maintainers' batch of work",
    r"\b(integrator|worktree)s?\b": "how the project is developed, not how it is used",
}

#: Documents for the project's maintainers, where their words are the right ones.
MAINTAINER_DOCS = {
    "docs/architecture.md": "how the code is built and why, for whoever changes it",
    "docs/releasing.md": "how a maintainer cuts a release",
}


def user_docs() -> List[Path]:
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]
    return [doc for doc in docs if str(doc.relative_to(REPO)) not in MAINTAINER_DOCS]


def test_the_maintainer_docs_exempted_exist():
    assert all((REPO / doc).is_file() for doc in MAINTAINER_DOCS), MAINTAINER_DOCS


@pytest.mark.parametrize("doc", user_docs(), ids=lambda doc: str(doc.relative_to(REPO)))
def test_a_user_doc_has_no_maintainer_words(doc):
    found = [f"{doc.relative_to(REPO)}:{number}: {match.group(0)!r}: {advice}"
             for number, line in enumerate(doc.read_text().splitlines(), start=1)
             for pattern, advice in MAINTAINER_WORDS.items()
             for match in re.finditer(pattern, line, flags=re.IGNORECASE)]
    assert not found, "\n".join(found)


def test_the_readme_opens_with_what_it_is_how_to_install_it_and_a_first_write():
    top = "\n".join((REPO / "README.md").read_text().splitlines()[:40])
    assert "Kinesis" in top and "Spark" in top, "what it is"
    assert "## Install" in top and "pip install" in top and "--packages" in top, "how to install it"
    assert '.write.format("kpl")' in top or "spark_kpl.write(" in top, "a first write"
