"""The option reference, the config example and the Python package's sink_facts.json are generated
from the JVM declarations and must match them, so neither the docs nor Python can drift from the code;
README's first write runs as it stands there; every link between the repository's documents leads
somewhere."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import spark_kpl
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.env import loopback_env, python_path
from spark_kpl_testing.net import LOOPBACK
from spark_kpl_testing.sigv4 import Credentials

REPO = Path(__file__).resolve().parents[2]


def generated(*tool: str) -> str:
    import pyspark

    spark_jars = Path(pyspark.__file__).parent / "jars"
    return subprocess.run(
        ["java", "-cp", f"{spark_kpl.jar_path()}:{spark_jars}/*", f"sparkkpl.tools.{tool[0]}", *tool[1:]],
        check=True, capture_output=True, text=True, timeout=120).stdout


@pytest.mark.parametrize("tool, committed", [
    (("OptionReference", "markdown"), "docs/options.md"),
    (("OptionReference", "conf"), "conf/spark-defaults.conf.example"),
    (("SinkFacts",), "python/spark_kpl/sink_facts.json"),
])
def test_committed_file_matches_the_declarations(tool, committed):
    assert (REPO / committed).read_text() == generated(*tool), \
        f"{committed} is stale: run scripts/gen-docs.sh"


def test_the_example_warns_that_the_kpls_aggregation_keys_switch_rows_to_the_kpls_aggregation():
    """Uncommenting AggregationEnabled or AggregationMaxCount in the config example, at the value shown,
    makes an unset aggregation mode kpl: every row one KPL user record, many times the KPL's work per row.
    The example says so right above each, so nobody takes it for a harmless default."""
    lines = (REPO / "conf/spark-defaults.conf.example").read_text().splitlines()
    for key in ("spark.kpl.AggregationEnabled", "spark.kpl.AggregationMaxCount"):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"# {key} "))
        assert "aggregation=kpl" in lines[at - 1] and "docs/aggregation.md" in lines[at - 1], lines[at - 1]


def _option_tables(text: str):
    """(option, default cell) of every markdown table row whose first cell is an `option` and whose
    header has a default column."""
    default_at = None
    for line in text.splitlines():
        if not line.startswith("|"):
            default_at = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if default_at is None:
            default_at = next((i for i, cell in enumerate(cells) if "default" in cell.lower()), -1)
        elif default_at > 0 and len(cells) > default_at and re.fullmatch(r"`[A-Za-z]+`", cells[0]):
            yield cells[0].strip("`"), cells[default_at]


def test_every_options_table_in_the_docs_shows_the_codes_default():
    """docs/options.md is generated from the option declarations; every hand-written table elsewhere
    that gives an option's default must show the same value."""
    declared = dict(_option_tables((REPO / "docs/options.md").read_text()))
    wrong = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]:
        if doc.name == "options.md":
            continue
        for option, shown in _option_tables(doc.read_text()):
            default = declared.get(option, "")
            if default and default not in shown:
                wrong.append(f"{doc.relative_to(REPO)}: {option} shows {shown!r}, the code's default is {default}")
    assert not wrong, "\n".join(wrong)


def test_the_example_says_which_kpl_defaults_the_sink_replaces():
    """The example shows each KPL property at the KPL's own default; where the sink sets another value
    unless given (RecordMaxBufferedTime for its aggregates, the daemon's LogLevel, the distribution
    strategy, the KPL's CloudWatch metrics), uncommenting the line would silently change that: the line above
    says what the sink sets."""
    lines = (REPO / "conf/spark-defaults.conf.example").read_text().splitlines()
    for key, sink_value in (("RecordMaxBufferedTime", "10 with aggregation=executor"), ("LogLevel", "error"),
                            ("RecordDistributionStrategyDefault", "USER_PARTITION_KEY"), ("MetricsLevel", "none")):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"# spark.kpl.{key} "))
        assert f"the sink sets this to {sink_value}" in lines[at - 1], lines[at - 1]


def test_every_figure_a_write_reports_is_documented_in_the_api_metrics_table():
    from spark_kpl._facts import METRICS

    section = (REPO / "docs" / "api.md").read_text().split("## Metrics:", 1)[1].split("\n## ", 1)[0]
    undocumented = [name for name in METRICS if f"`{name}`" not in section]
    assert undocumented == []


def marked_block(doc: Path, name: str, language: str) -> str:
    """The ``language`` code block right after ``<!-- run: name -->`` in ``doc``."""
    found = re.search(rf"<!-- run: {name} -->\n```{language}\n(.*?)```", doc.read_text(), re.S)
    assert found, f"{doc.relative_to(REPO)} has no {language} block marked run: {name}"
    return found.group(1)


def test_the_readmes_first_write_runs_as_pasted(tmp_path):
    """README's first write as it stands there, with only the emulator's port replaced by that of the
    project's endpoint, which accepts nothing but the example's keys (so they are what signs): both of
    its writes deliver every row with its key, and it prints what it says it prints. The CloudWatch
    endpoint, which the example leaves alone, is kept on loopback from $SPARK_CONF_DIR."""
    example = marked_block(REPO / "README.md", "first-write", "python")
    assert example.count('"4567"') == 1, "the example's port is no longer where this test replaces it"
    with KinesisEndpoint({"clicks": 2}, credentials=[Credentials("local", "local")]) as kinesis:
        (tmp_path / "first_write.py").write_text(example.replace('"4567"', f'"{kinesis.port}"'))
        conf = tmp_path / "conf"
        conf.mkdir()
        (conf / "spark-defaults.conf").write_text("spark.ui.enabled false\n"
                                                  f"spark.kpl.CloudwatchEndpoint {LOOPBACK}\n"
                                                  f"spark.kpl.CloudwatchPort {kinesis.port}\n")
        env = {**loopback_env(), "PYTHONPATH": python_path(), "SPARK_CONF_DIR": str(conf), "SPARK_LOCAL_IP": LOOPBACK}
        run = subprocess.run([sys.executable, "first_write.py"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-4000:]
        assert "1000 0" in run.stdout.splitlines(), run.stdout
        copies = Counter((record.data, record.partition_key) for record in kinesis.records("clicks"))
    expected = {(json.dumps({"click": i, "page": "home"}, separators=(",", ":")).encode(), f"user-{i % 10}")
                for i in range(1000)}
    assert set(copies) == expected, f"missing {len(expected - set(copies))}, unexpected {len(set(copies) - expected)}"
    assert set(copies.values()) == {2}, f"copies per row, two writes: {Counter(copies.values())}"



def test_the_readmes_opening_write_to_kinesis_runs_as_pasted(tmp_path):
    """The write at README's top, against Kinesis itself, as it stands there: the project's endpoint serves
    its region and stream, and reaches the KPL the way a cluster's settings do, from spark-defaults.conf
    in $SPARK_CONF_DIR (with the master); every row arrives once with its key."""
    example = marked_block(REPO / "README.md", "first-write-kinesis", "python")
    with KinesisEndpoint({"clicks": 2}, region="eu-west-1") as kinesis:
        (tmp_path / "first_write.py").write_text(example)
        conf = tmp_path / "conf"
        conf.mkdir()
        settings = {"spark.master": "local[2]", "spark.ui.enabled": "false",
                    **{f"spark.kpl.{name}": value for name, value in kinesis.kpl_options().items()}}
        (conf / "spark-defaults.conf").write_text("".join(f"{key} {value}\n" for key, value in settings.items()))
        env = {**loopback_env(), "PYTHONPATH": python_path(), "SPARK_CONF_DIR": str(conf), "SPARK_LOCAL_IP": LOOPBACK}
        run = subprocess.run([sys.executable, "first_write.py"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-4000:]
        copies = Counter((record.data, record.partition_key) for record in kinesis.records("clicks"))
    assert copies == Counter({(f"click-{i}".encode(), f"user-{i % 10}"): 1 for i in range(1000)})

#: A Markdown link's target: ``[text](target)``, an address outside the repository left out.
_LINK = re.compile(r"\]\((?!https?://|mailto:)([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """The anchor a Markdown heading gets: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(markdown: Path) -> set:
    text = re.sub(r"(?ms)^```.*?^```", "", markdown.read_text())
    return {_anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_every_link_between_the_repositorys_documents_finds_its_file_and_heading():
    # python/README.md is a link to README.md, whose links are relative to the top.
    documents = [path for path in REPO.rglob("*.md") if not path.is_symlink() and not any(
        part.startswith(".") or part in ("build", "node_modules") for part in path.relative_to(REPO).parts)]
    broken = []
    for document in documents:
        for target in _LINK.findall(document.read_text()):
            path, _, anchor = target.partition("#")
            linked = (document.parent / path).resolve() if path else document
            if not linked.exists():
                broken.append(f"{document.relative_to(REPO)}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{document.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
