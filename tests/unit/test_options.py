"""What spark_kpl checks of a write's options and of a session builder before Spark is involved: no
Spark, no JVM."""

from __future__ import annotations

from typing import Any, Dict, Optional

import pytest
from pyspark.sql import SparkSession

import spark_kpl
from spark_kpl._facts import PLUGIN
from spark_kpl.writer import _java_options


def test_options_are_stringified_as_spark_s_writer_does_and_none_is_left_out() -> None:
    assert _java_options({"failOnError": False, "queueLimit": 1000, "RecordTtl": 30000.5, "writeName": "n",
                          "deadLetterPath": None}) == {
        "failOnError": "false", "queueLimit": "1000", "RecordTtl": "30000.5", "writeName": "n"}


@pytest.mark.parametrize("value", [["a"], {"k": "v"}, b"bytes"])
def test_an_option_of_another_type_is_refused_naming_it(value: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="queueLimit"):
        _java_options({"queueLimit": value})


def builder(options: Optional[Dict[str, str]] = None) -> SparkSession.Builder:
    """``SparkSession.builder`` with these options set: a session of its own is not started."""
    made = SparkSession.Builder()
    for key, value in (options or {}).items():
        made.config(key, value)
    return made


@pytest.fixture
def no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """No classic session runs in this process, and no Connect address is set."""
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)


def test_configure_adds_the_jar_to_spark_jars_once(no_session: None) -> None:
    jar = str(spark_kpl.jar_path())

    assert spark_kpl.configure(builder())._options["spark.jars"] == jar
    assert spark_kpl.configure(builder({"spark.jars": "other.jar"}))._options["spark.jars"] == f"other.jar,{jar}"
    assert spark_kpl.configure(builder({"spark.jars": jar}))._options["spark.jars"] == jar


def test_configure_adds_the_plugin_beside_those_of_spark_plugins_once(no_session: None) -> None:
    plugins = "spark.plugins.defaultList"

    assert spark_kpl.configure(builder())._options[plugins] == PLUGIN
    assert spark_kpl.configure(builder({plugins: "other.Plugin"}))._options[plugins] == f"other.Plugin,{PLUGIN}"
    assert spark_kpl.configure(builder({plugins: PLUGIN}))._options[plugins] == PLUGIN
    given = spark_kpl.configure(builder({"spark.plugins": f"other.Plugin,{PLUGIN}"}))._options
    assert plugins not in given and given["spark.plugins"] == f"other.Plugin,{PLUGIN}"
    assert "spark.plugins" not in spark_kpl.configure(builder())._options  # spark-defaults.conf's stays in force


def test_configure_refuses_a_connect_builder_saying_where_the_jar_goes(no_session: None) -> None:
    with pytest.raises(spark_kpl.SinkNotOnSession, match="the jar belongs on the server") as refused:
        spark_kpl.configure(builder({"spark.remote": "sc://127.0.0.1:15002"}))
    assert isinstance(refused.value, RuntimeError)
