"""What the JVM declares and Python must agree with, read rather than repeated: every name Python hands
to the sink or reads back from it (the data source, options, config keys and choices, reports and their
columns, metrics, the sink's columns, error tags, the daemon-placing tool), the sentence naming an
undelivered record, and the record-id header layout. ``sink_facts.json`` is written from the JVM
declarations by scripts/gen-docs.sh; tests/packaging/test_docs.py fails when it is stale, and
tests/packaging/test_sink_facts.py when another module of the package spells one of its names itself. Read as
package data, like VERSION, so that it is found in a zip shipped with --py-files as well."""

from __future__ import annotations

import json
import pkgutil
from dataclasses import dataclass
from typing import Any, Dict, List

_FILE = "sink_facts.json"


def _read() -> Dict[str, Any]:
    data = pkgutil.get_data(__package__, _FILE)
    if data is None:
        raise ImportError(f"spark_kpl cannot read its {_FILE}")
    return json.loads(data)


@dataclass(frozen=True)
class SinkOption:
    """One of the sink's options: its name, its ``spark.kpl.*`` config key (empty for an option that
    cannot be one) and, for a choice option, its values by the JVM constant's name (``RAW``: ``raw``)."""

    name: str
    config_key: str
    choices: Dict[str, str]


@dataclass(frozen=True)
class Report:
    """A report ``spark.read.format(DATA_SOURCE).option(REPORT_OPTION, name)`` answers, and its columns."""

    name: str
    columns: List[str]


@dataclass(frozen=True)
class RecordIdField:
    """A field of the record-id header: its name, its size, and whether it is a number (else raw bytes)."""

    name: str
    bytes: int
    number: bool


_FACTS = _read()
#: The name of the sink as a Spark data source (``df.write.format(...)``).
DATA_SOURCE: str = _FACTS["dataSource"]
#: The sink's Spark plugin class, for ``spark.plugins``.
PLUGIN: str = _FACTS["plugin"]
#: Every option of the sink but the KPL's properties, by the name of the JVM constant declaring it.
OPTIONS: Dict[str, SinkOption] = {
    constant: SinkOption(option["name"], option.get("configKey", ""), option.get("choices", {}))
    for constant, option in _FACTS["options"].items()
}
#: The read option naming a report, and the writeResult report's option naming the write's result key.
REPORT_OPTION: str = _FACTS["reportOption"]
RESULT_KEY_OPTION: str = _FACTS["resultKeyOption"]
#: The sink's reports, by the name of the JVM constant declaring each.
REPORTS: Dict[str, Report] = {constant: Report(report["name"], report["columns"])
                              for constant, report in _FACTS["reports"].items()}
#: Each figure a write reports, as WriteResult and the Spark UI name it, in the JVM's order.
METRICS: List[str] = _FACTS["metrics"]
#: The sink's column names, by the name of the JVM constant declaring each (``PARTITION_KEY``: ``partitionKey``).
SINK_COLUMNS: Dict[str, str] = _FACTS["sinkColumns"]
#: What an error tag starts with, each tag's fields by its kind (the name of the Python exception), and the
#: JVM exception classes whose messages end in a tag of that kind.
ERROR_TAG_OPENING: str = _FACTS["errorTag"]["opening"]
ERROR_TAG_FIELDS: Dict[str, List[str]] = {kind["name"]: kind["fields"] for kind in _FACTS["errorTag"]["kinds"]}
ERROR_CLASSES: Dict[str, List[str]] = {kind["name"]: kind["jvmClasses"] for kind in _FACTS["errorTag"]["kinds"]}
#: The JVM's sentence for a record Kinesis finally failed, and for a row that could not become a record:
#: ``{field}`` stands for the RecordsNotDelivered tag's field of that name.
UNDELIVERED_BY_KINESIS: str = _FACTS["undeliveredRecord"]["kinesisFailed"]
UNDELIVERED_BY_COLUMN: str = _FACTS["undeliveredRecord"]["rowRefused"]
#: The JVM class that places the KPL daemon, and what it puts before a refusal.
PLACE_DAEMON_MAIN: str = _FACTS["placeDaemon"]["mainClass"]
PLACE_DAEMON_REFUSAL_PREFIX: str = _FACTS["placeDaemon"]["refusalPrefix"]
#: The current record-id header: its magic, its size and its fields in order.
RECORD_ID_MAGIC = bytes.fromhex(_FACTS["recordId"]["magic"])
RECORD_ID_SIZE: int = _FACTS["recordId"]["size"]
RECORD_ID_FIELDS: List[RecordIdField] = [RecordIdField(**field) for field in _FACTS["recordId"]["fields"]]
