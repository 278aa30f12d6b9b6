"""What the soak runs with: the query's shape, the JVM's heap, the faults' timing, the memory rule."""

from __future__ import annotations

from spark_kpl_bench.processes import fixed_heap_flags

#: Two task threads, and Spark's task retry (4 attempts, as spark.task.maxFailures on a cluster).
MASTER = "local[2,4]"
#: The driver JVM's heap (spark.driver.memory becomes its -Xmx; local mode, so it is the executor's too).
DRIVER_MEMORY = "1g"
#: As a long-running streaming job's JVM is run: the heap at its maximum from the start (-Xms = -Xmx), and
#: every page of it touched at start (AlwaysPreTouch), so the heap is resident from the first second. The
#: JVM's RSS is then the fixed heap plus native memory (metaspace, code cache, thread stacks, direct
#: buffers, malloc), and its growth is native growth, not G1 taking pages it was always allowed to take
#: (the run before this rule: RSS 543 -> 874 MiB in one step at minute 10, heap committed 242 -> 567 MiB,
#: live heap flat). spark.driver.extraJavaOptions reaches the local-mode JVM's command line through
#: spark-submit, which refuses -Xmx there; the runner checks the flags on /proc/<pid>/cmdline.
DRIVER_JAVA_OPTIONS = " ".join(fixed_heap_flags(DRIVER_MEMORY))
DRIVER_HEAP_FLAGS = (f"-Xmx{DRIVER_MEMORY}", *fixed_heap_flags(DRIVER_MEMORY))
STREAM, SHARDS = "soak", 1
PARTITIONS = 2
RECORD_BYTES = 1000
#: About 30 s of a shard's quota per micro-batch: more than the sink's 16 MiB queue cap, so backpressure works.
ROWS_PER_BATCH = 30_000
WARM_UP_MINUTES = 1  # JIT, class loading, the daemon's first shard map: not the steady state
FAULTS_FROM_SECONDS = WARM_UP_MINUTES * 60  # the faults start right after the warm-up
FAULT_KINDS = ("5xx burst", "connection resets", "outage", "KPL daemon kill")  # one cycle, in this order
#: After the first cycle of faults has ended, a minute more before the baseline minute starts: the daemon
#: that replaced the killed one has then been through a retry burst (the next cycle's first fault), and
#: the tasks the kill failed have been retried. Before that, a daemon's RSS is below its plateau: it grows
#: through its first retry burst, and a kill replaces it by a young one that grows again.
SETTLE_SECONDS = 60
BURST_SECONDS = 20
OUTAGE_SECONDS = 10  # shorter than RecordTtl (30 s), but records queued behind the throttle may still expire
#: Flat: the median of the last quarter's per-minute peaks within 10 % of the baseline minute's peak.
FLAT_WITHIN = 0.10
MAX_RESTARTS, RESTART_PAUSE_SECONDS = 10, 5.0
JVM_EXIT_SECONDS = 60
HISTOGRAM_SECONDS = 120  # jcmd's time limit for a class histogram (a full GC of the 1g heap, then the count)
TOP_GROWERS = 15
MIB = 1 << 20
