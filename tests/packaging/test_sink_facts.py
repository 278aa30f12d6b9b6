"""sink_facts.json, which scripts/gen-docs.sh writes from the JVM's declarations, is the one contract
between the JVM and Python: no other module of spark_kpl spells a name it carries, and where Python
keeps a declaration of its own beside the JVM's (WriteResult's typed fields, the exceptions' parameters
are the public API), it must equal the file's."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import uuid
from pathlib import Path
from typing import Any, Iterator, List, Set, Tuple

import spark_kpl
from spark_kpl import RecordsNotDelivered, WriteResult, dedup, errors, writer
from spark_kpl._facts import ERROR_TAG_FIELDS, ERROR_TAG_OPENING, METRICS, SINK_COLUMNS, UNDELIVERED_BY_KINESIS

PACKAGE = Path(spark_kpl.__file__).parent
#: The one module that reads the file, and so names what is in it.
READER = PACKAGE / "_facts.py"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def jvm_names() -> Set[str]:
    """Every name in sink_facts.json: all its strings but the note, the sentences and the magic's hex."""
    facts = json.loads((PACKAGE / "sink_facts.json").read_text())
    del facts["generated"], facts["undeliveredRecord"], facts["recordId"]["magic"]
    return set(_strings(facts))


def literals(source: str) -> Iterator[Tuple[int, str]]:
    """(line, text) of each string constant of a module, f-strings' constant parts included; docstrings
    (prose for the reader) and ``__all__`` (Python's own exports) left out."""
    tree = ast.parse(source)
    prose: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                prose.add(id(first.value))
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "__all__" for target in node.targets):
            prose.update(id(part) for part in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            yield node.lineno, node.value


def spelled(text: str, name: str) -> bool:
    """A name that cannot be a plain word (camelCase, dotted, snake_case, with a space or a dash) counts
    anywhere in a string; a plain word (``data``, ``raw``) only as the whole string."""
    if name == text:
        return True
    distinct = name != name.lower() or any(mark in name for mark in "._- ")
    return distinct and name in text


def test_no_module_but_the_reader_spells_a_jvm_name():
    names = jvm_names()
    found: List[str] = []
    for module in sorted(PACKAGE.glob("*.py")):
        if module == READER:
            continue
        for line, text in literals(module.read_text()):
            found += [f"{module.name}:{line}: {name!r} in {text!r}" for name in sorted(names) if spelled(text, name)]
    assert not found, "read these names from spark_kpl._facts instead:\n" + "\n".join(found)


def test_each_error_tag_is_an_exception_taking_the_tags_fields():
    assert set(errors._TAGGED) == set(ERROR_TAG_FIELDS), "the JVM's error tags and spark_kpl's exceptions differ"
    for kind, fields in ERROR_TAG_FIELDS.items():
        parameters = list(inspect.signature(errors._TAGGED[kind]).parameters)
        assert parameters == [errors._parameter(field) for field in fields], (kind, fields)


def test_a_tagged_message_becomes_its_exception():
    fields = {"stream": "s", "partitionKey": "k", "explicitHashKey": None, "sparkPartition": 2, "row": 7,
              "column": None, "errorCode": "Expired", "errorMessage": "late"}
    text = f"Job aborted: ... {ERROR_TAG_OPENING}RecordsNotDelivered {json.dumps(fields)}] more"
    error = errors._first_tag(text)
    assert isinstance(error, RecordsNotDelivered)
    assert (error.stream, error.partition_key, error.spark_partition, error.row, error.error_code) == \
        ("s", "k", 2, 7, "Expired")


def test_an_undelivered_record_is_named_in_the_jvms_sentence():
    error = RecordsNotDelivered("clicks", None, None, 3, 12, None, "Expired", "Record has reached expiration")
    jvm_sentence = UNDELIVERED_BY_KINESIS
    for field, value in {"row": 12, "sparkPartition": 3, "stream": "clicks", "partitionKey": "null",
                         "errorCode": "Expired", "errorMessage": "Record has reached expiration"}.items():
        jvm_sentence = jvm_sentence.replace("{" + field + "}", str(value))
    assert str(error) == jvm_sentence


def test_write_result_has_a_field_for_each_metric_in_the_jvm_order():
    fields = [field.name for field in dataclasses.fields(WriteResult)]
    missing, unknown = set(METRICS) - set(fields), set(fields) - set(METRICS)
    assert fields == METRICS, (f"WriteResult differs from the JVM's WriteMetric: lacks {sorted(missing)}, "
                               f"has besides {sorted(unknown)}, order {fields} against {METRICS}")


def test_every_sink_column_has_a_column_argument():
    assert sorted(writer._SINK_COLUMNS.values()) == sorted(SINK_COLUMNS.values()), \
        f"spark_kpl.write's column arguments {writer._SINK_COLUMNS} differ from RowLayout's columns {SINK_COLUMNS}"


def test_the_header_layout_fills_the_header():
    assert dedup._LAYOUT.size == dedup.HEADER_SIZE


def test_a_header_laid_out_by_the_facts_reads_back():
    write_id = uuid.uuid4()
    fields = {"magic": dedup.MAGIC, "write_id": write_id.bytes, "batch_id": 7, "partition": 3,
              "digest": bytes(range(12)), "occurrence": 2}
    header = dedup._LAYOUT.pack(*(fields[name] for name in dedup._FIELD_NAMES))
    assert dedup.record_id(header + b"data") == dedup.RecordId(write_id, 7, 3, bytes(range(12)), 2)
    assert dedup.strip(header + b"data") == b"data"
