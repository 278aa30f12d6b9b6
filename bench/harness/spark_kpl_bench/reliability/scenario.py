"""What a reliability scenario is: its fault, its write and the outcome it must lead to; and the shape
of the write every scenario makes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional

from spark_kpl_testing.endpoint import Faults, KinesisEndpoint

MASTER = "local[2,4]"
CLUSTER_WORKERS = 2
PARTITIONS = 4
ROW_SLEEP_MS = 5
#: Data of the rows over the size limit (every 100th, with ``oversized_rows``): with the key and the
#: record-id header, over the default maxRecordBytes (1 MiB, data plus partition key).
OVERSIZED_BYTES = 1 << 20
#: The partition key of a scenario's hot rows (``hot_key_every``).
HOT_KEY = "hot-key"
#: The stream of the query that ``beside_a_slow_query`` starts first, whose control-plane calls are held.
SLOW_STREAM = "rel-slow"


@dataclass
class Scenario:
    name: str
    faults: Faults = field(default_factory=Faults)
    options: Dict[str, str] = field(default_factory=dict)
    stream: Optional[str] = None  # write to this (missing) stream instead of the scenario's own
    #: (endpoint) -> None, run on a thread once the endpoint holds ``trigger_after`` records.
    during: Optional[Callable[[KinesisEndpoint], None]] = None
    trigger_after: int = 0
    note: str = ""
    #: A Structured Streaming query (one micro-batch per Spark partition of the rows), restarted from
    #: its checkpoint when it fails, instead of a batch write.
    streaming: bool = False
    #: The outcome this fault must lead to (a regular expression matched at the outcome's start).
    expect: str = "success"
    #: On the standalone cluster (an executor JVM per worker) instead of local mode.
    cluster: bool = False
    #: Every 100th row carries OVERSIZED_BYTES of data.
    oversized_rows: bool = False
    #: The data of each (other) row, in bytes: its first 100 name it.
    row_bytes: int = 100
    #: A streaming query whose driver is killed after the sink committed a micro-batch and before Spark
    #: logged it, then restarted from its checkpoint.
    driver_killed: bool = False
    #: The stream is on-demand (it has a record distribution strategy).
    on_demand: bool = False
    #: The rows name the stream (a streamName column, target_stream), the write does not.
    named_by_rows: bool = False
    #: The stream's shards.
    shards: int = 2
    #: Every ``hot_key_every``-th row has the partition key HOT_KEY (0: none), so that one shard takes more
    #: than the others.
    hot_key_every: int = 0
    #: The write as this many batch writes at once, each of an equal share of the rows and with a producer
    #: (and daemon) of its own.
    producers: int = 1
    #: The local-mode master its session runs on, if not MASTER: enough task threads for ``producers``.
    master: Optional[str] = None
    #: The rows carry no partition key: the sink chooses one for each (at random, its default).
    keys_by_sink: bool = False
    #: Streaming queries, each of an equal share of the rows, started beside a query already waiting for
    #: its look at SLOW_STREAM (0: none).
    beside_a_slow_query: int = 0
    #: (spark, endpoint, stream, options) -> None, run before the write, in the same Spark session.
    before: Optional[Callable[[Any, KinesisEndpoint, str, Dict[str, str]], None]] = None


