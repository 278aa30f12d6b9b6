"""What the JVM declares and Python must agree with, read rather than repeated: the metric names, the
sink's column names and the record-id header layout. ``sink_facts.json`` is written from the JVM
declarations by scripts/gen-docs.sh; tests/test_docs.py fails when it is stale. Read as package
data, like VERSION, so that it is found in a zip shipped with --py-files as well."""

from __future__ import annotations

import json
import pkgutil
from typing import Any, Dict, List

_FILE = "sink_facts.json"


def _read() -> Dict[str, Any]:
    data = pkgutil.get_data(__package__, _FILE)
    if data is None:
        raise ImportError(f"spark_kpl cannot read its {_FILE}")
    return json.loads(data)


_FACTS = _read()
#: Each figure a write reports, as WriteResult and the Spark UI name it, in the JVM's order.
METRICS: List[str] = _FACTS["metrics"]
#: The sink's column names, by the name of the JVM constant declaring each (``PARTITION_KEY``: ``partitionKey``).
SINK_COLUMNS: Dict[str, str] = _FACTS["sinkColumns"]
#: The current record-id header: ``magic`` (hex), ``size`` and ``fields`` (name, bytes, whether a number).
RECORD_ID: Dict[str, Any] = _FACTS["recordId"]
