"""A stand-alone endpoint, for a benchmark or a shell: ``python -m spark_kpl_testing.endpoint``."""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
import threading
from typing import List, Optional

from spark_kpl_testing.endpoint.faults import Faults
from spark_kpl_testing.endpoint.server import KinesisEndpoint


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m spark_kpl_testing.endpoint --stream NAME=SHARDS ... [--no-store]``.

    Prints one JSON line (port and KPL options), serves until SIGTERM or SIGINT, or until its
    stdin ends if stdin is a pipe (so it ends with the process that started it through one), then
    prints the counters as one JSON line.
    """
    parser = argparse.ArgumentParser(prog="python -m spark_kpl_testing.endpoint",
                                     description=main.__doc__)
    parser.add_argument("--stream", action="append", default=[], metavar="NAME=SHARDS")
    parser.add_argument("--no-store", action="store_true", help="count records, keep none")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--shard-limits", type=float, metavar="SHARE",
                        help="throttle at this share of Kinesis's per-shard limits, and hold "
                             "control-plane calls at Kinesis's own limits")
    args = parser.parse_args(argv)
    streams = {}
    for spec in args.stream:
        name, _, shards = spec.rpartition("=")
        streams[name] = int(shards)
    faults = Faults.kinesis_limits(args.shard_limits) if args.shard_limits else None
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())

    def watch_stdin() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        done.set()

    with KinesisEndpoint(streams, store=not args.no_store, faults=faults,
                         region=args.region) as endpoint:
        print(json.dumps({"port": endpoint.port, "kpl_options": endpoint.kpl_options()}), flush=True)
        if stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode):
            threading.Thread(target=watch_stdin, daemon=True).start()
        while not done.wait(0.5):
            pass
        print(json.dumps(endpoint.stats()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
