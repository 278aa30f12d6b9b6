"""The daemon the sink places starts through the launcher placed beside it, with glibc's allocator
set to hand back what the daemon frees: left at glibc's defaults its peak RSS at 1,024 shards was
about twice its peak at 8, and about half of it memory already freed
(bench/results/daemon-allocator/README.md, "The daemon's allocator")."""

from __future__ import annotations

from typing import List

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.processes import anonymous_mappings, daemons_placed_in, driver_jvm_pid, environment, executable

#: One arena; freed memory above 64 KiB handed back; allocations of 64 KiB or more in pages of their own.
ALLOCATOR_TUNABLES = "glibc.malloc.arena_max=1:glibc.malloc.trim_threshold=65536:glibc.malloc.mmap_threshold=65536"
ROWS = 20_000
#: glibc reserves each arena a thread gets (all but the main one) as 64 MiB of its own, 64 MiB aligned.
ARENA_BYTES = 64 << 20


def thread_arenas(pid: int) -> List[int]:
    """Where the malloc arenas of ``pid``'s threads begin: anonymous mappings at a 64 MiB boundary that,
    with the inaccessible rest of the reservation right after, span exactly 64 MiB."""
    anonymous = anonymous_mappings(pid)
    arenas = []
    for i, (start, end) in enumerate(anonymous):
        if start % ARENA_BYTES == 0:
            reserved_end = anonymous[i + 1][1] if i + 1 < len(anonymous) and anonymous[i + 1][0] == end else end
            if ARENA_BYTES in (end - start, reserved_end - start):
                arenas.append(start)
    return arenas


def test_the_placed_daemon_runs_with_the_allocator_set_to_hand_back_what_it_frees(spark, endpoint, ep_stream,
                                                                                  tmp_path):
    native = tmp_path / "native"
    options = {**endpoint.kpl_options(), "nativeDir": str(native), "producerIdleTimeoutMs": "60000"}

    result = spark_kpl.write(numbered_rows(spark, ROWS, partitions=2), ep_stream, partition_key="partitionKey",
                             **options)

    assert (result.records_written, result.records_failed) == (ROWS, 0)
    report = compare(numbered_expected(ROWS), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
    [daemon] = daemons_placed_in([driver_jvm_pid(spark)], native)
    [placed] = native.glob("*/kinesis_producer")
    assert executable(daemon) == placed, "the launcher replaces itself with the placed daemon"
    # glibc cuts the variable where it reads it, so the daemon's environment shows the first tunable.
    tunables = environment(daemon).get("GLIBC_TUNABLES", "unset")
    assert tunables and ALLOCATOR_TUNABLES.startswith(tunables), tunables
    assert thread_arenas(daemon) == [], "glibc gave the daemon's threads arenas of their own"
    assert "GLIBC_TUNABLES" not in environment(driver_jvm_pid(spark)), "the tasks' JVM keeps glibc's defaults"
