"""The soak (scripts/soak.py): a streaming query held at Kinesis's quota for minutes while faults come
and go, its memory sampled each second; the runner, its parts, and the report that becomes docs/soak.md."""
