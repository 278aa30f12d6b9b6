"""docs/troubleshooting.md's first-hour entries quote what is printed; each quote is checked against where
its text comes from, so that a message changed in the code fails here until the page follows.

A block marked ``<!-- quoted from: X -->`` holds one quote a line, ``...`` where the text varies (at
either end: text around the quote):
- the sink: the Java sources and the Python package, their string literals joined as they print
  (``"a" + x + "b"`` reads ``a...b``; ``{name}`` placeholders and f-string fields read ``...``);
- the KPL: the strings of the KPL's Java classes and of its daemon, from the jar;
- the JVM: HotSpot's own message (in libjvm), for the jar's class file version;
- Spark: the errors triggered on this Spark line; each must be quoted by a line of the entry.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from functools import cache
from pathlib import Path
from typing import Dict, List

import pytest
from pyspark.sql import functions as F

import spark_kpl

from install_main import bundled_daemon_resource

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "troubleshooting.md"
_BLOCK = re.compile(r"<!-- quoted from: ([^>]+?) -->\n```text\n(.*?)```", re.S)


def first_hour() -> str:
    return DOC.read_text().split("## The first hour", 1)[1].split("\n## ", 1)[0]


def quotes() -> Dict[str, List[str]]:
    """Quoted lines by source, as written (``...`` at an end: text before or after)."""
    found: Dict[str, List[str]] = {}
    for source, block in _BLOCK.findall(first_hour()):
        found.setdefault(source, []).extend(line for line in block.split("\n") if line.strip())
    return found


def literal(line: str) -> str:
    """The line less a ``...`` at either end, which stands for text around the quote."""
    return line.removeprefix("...").removesuffix("...")


def entry(heading: str) -> str:
    return first_hour().split(f"### {heading}", 1)[1].split("\n### ", 1)[0]


def normalised_java(text: str) -> str:
    text = re.sub(r'"\s*\+\s*"', "", text)  # literals joined
    text = re.sub(r'"\s*\+\s*[^";]+?\s*\+\s*"', "...", text)  # a value between literals
    return re.sub(r"\{\w+\}", "...", text)


def normalised_python(text: str) -> str:
    text = re.sub(r'"\s*\n\s*f?"', "", text)  # adjacent literals across lines
    return re.sub(r"\{[^{}\"]+\}", "...", text)


@cache
def sink_text() -> str:
    java = (normalised_java(path.read_text()) for path in (REPO / "jvm/src/main/java").rglob("*.java"))
    python = (normalised_python(path.read_text()) for path in (REPO / "python/spark_kpl").rglob("*.py"))
    return "\n".join([*java, *python])


@cache
def kpl_bytes() -> bytes:
    with zipfile.ZipFile(spark_kpl.jar_path()) as jar:
        classes = [jar.read(name) for name in jar.namelist()
                   if name.startswith("sparkkpl/shaded/software/amazon/kinesis/producer/") and name.endswith(".class")]
        return b"\n".join([*classes, jar.read(bundled_daemon_resource())])


def test_every_source_is_one_the_test_checks():
    assert set(quotes()) == {"the sink", "the KPL", "the JVM", "Spark"}


@pytest.mark.parametrize("line", quotes()["the sink"])
def test_the_sinks_quotes_are_in_its_code(line):
    assert literal(line) in sink_text(), f"no message in jvm/src/main/java or python/spark_kpl reads: {line!r}"


@pytest.mark.parametrize("line", quotes()["the KPL"])
def test_the_kpls_quotes_are_in_the_kpl(line):
    assert literal(line).encode() in kpl_bytes(), f"the KPL in the jar has no text {line!r}"


def test_the_jvms_quote_names_the_jars_class_file_version():
    [line] = quotes()["the JVM"]
    with zipfile.ZipFile(spark_kpl.jar_path()) as jar:
        major = int.from_bytes(jar.read("sparkkpl/spark/KplDataSource.class")[6:8], "big")
    assert major == 61, "the jar is built for Java 17"
    assert f"(class file version {major}.0)" in line
    # The JDK the tests run on (17): its HotSpot writes the message.
    libjvm = Path(shutil.which("java") or "java").resolve().parents[1] / "lib" / "server" / "libjvm.so"
    template = re.sub(r"\d+\.\d", "%u.%u", line.replace("sparkkpl/spark/KplDataSource", "%s"))
    assert template.rsplit("%u.%u", 1)[0].encode() in libjvm.read_bytes()


# ---------------------------------------------------------------------------------------------- Spark's


def spark_error(action) -> str:
    with pytest.raises(Exception) as error:
        action()
    return str(error.value).split("\n", 1)[0]


def test_the_save_mode_entry_quotes_what_this_spark_line_prints(spark):
    rows = spark.range(1).select(F.lit("x").alias("data"))
    writer = rows.write.format("kpl").option("streamName", "clicks")
    printed = [spark_error(writer.save), spark_error(writer.mode("ignore").save)]
    quoted = [line for line in quotes()["Spark"] if line in entry("Save modes: append only")]
    for message in printed:
        assert any(line.replace('"ErrorIfExists"', '"Ignore"').replace(" ErrorIfExists ", " Ignore ") in message
                   or line in message for line in quoted), message
    # Overwrite reaches the sink, which refuses it naming what works.
    [refusal] = [line for line in quotes()["the sink"] if line in entry("Save modes: append only")]
    assert literal(refusal) in spark_error(writer.mode("overwrite").save)


def test_the_missing_jar_entry_quotes_what_this_spark_line_prints(spark):
    # Spark's own message for a source it cannot find, built as its lookup builds it.
    errors = spark._jvm.org.apache.spark.sql.errors.QueryExecutionErrors
    message = errors.dataSourceNotFoundError("kpl", None).getMessage()
    [quoted] = [line for line in quotes()["Spark"] if line in entry("The jar is not on the classpath")]
    assert quoted in message
