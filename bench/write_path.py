"""How many of the sink's classes and source files one batch write passes through.

Runs the demo job (scripts/demo_job.py: local mode, so the driver and the tasks share one JVM) with the
JVM's class-loading log on, and counts the classes of package ``sparkkpl`` it loaded, leaving out the
shaded KPL and its dependencies (``sparkkpl.shaded``) and the JVM's generated lambda classes. A source
file is a top-level class with its nested ones. Loaded is an upper bound of "passed through": a class
is loaded when first named on a path that runs, and the demo's one write is the only thing that runs.

    .venv/bin/python bench/write_path.py --out bench/results/write-path/<name>.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
LOADED = re.compile(r"\[class,load\s*\] (sparkkpl\.[\w.$]+) source:")


def sink_classes(class_log: Path) -> List[str]:
    """The sink's own classes in the log, in load order, lambdas and the shaded KPL left out."""
    names = [match.group(1) for match in map(LOADED.search, class_log.read_text().splitlines()) if match]
    return [name for name in names if not name.startswith("sparkkpl.shaded.") and "$$Lambda" not in name]


def source_file(class_name: str) -> str:
    return class_name.split("$", 1)[0]


def count(classes: List[str]) -> Dict[str, object]:
    files = sorted({source_file(name) for name in classes})
    by_package = collections.Counter(name.split(".")[1] for name in files)
    return {"classes": len(set(classes)), "files": len(files), "files_by_package": dict(sorted(by_package.items())),
            "file_names": files}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        class_log = Path(scratch) / "classes.log"
        env = dict(os.environ, JDK_JAVA_OPTIONS=f"-Xlog:class+load=info:file={class_log}")
        subprocess.run([sys.executable, str(ROOT / "scripts/demo_job.py"), "--rows", str(args.rows)],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        result = count(sink_classes(class_log))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    result = {"command": " ".join(["bench/write_path.py", *sys.argv[1:]]), "git_commit": commit.strip(), **result}
    print(f"one write loaded {result['classes']} of the sink's classes from {result['files']} source files: "
          f"{result['files_by_package']}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
