"""``python -m spark_kpl jar-path`` and ``python -m spark_kpl extract-native [--dir DIR]``."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_kpl")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("jar-path", help="print the path of the spark-kpl jar")
    extract = commands.add_parser(
        "extract-native",
        help="place the KPL's native daemon where executors look for it (for bootstrap actions);"
        " runs the jar's own placement in a JVM",
    )
    extract.add_argument("--dir", help="folder to place it in (default: the executors' default)")
    extract.add_argument("--jar", help="the spark-kpl jar to take it from (default: jar-path)")
    args = parser.parse_args(argv)
    if args.command == "jar-path":
        from spark_kpl import jar_path

        print(jar_path())
        return 0
    from spark_kpl.native import cli_extract_native

    return cli_extract_native(args)


if __name__ == "__main__":
    sys.exit(main())
