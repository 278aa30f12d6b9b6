"""Finding the spark-kpl jar: the helper plus the relocated KPL, built by ``scripts/build.sh``."""

from __future__ import annotations

import os
import pkgutil
from pathlib import Path

#: Written once, in the package's VERSION file, which the jar's build and the wheel read too. Read as
#: package data, so that it is found in a zip shipped with --py-files as well.
__version__ = (pkgutil.get_data(__package__, "VERSION") or b"").decode().strip()
JAR_NAME = f"spark-kpl-{__version__}.jar"
#: Points at a jar explicitly, e.g. on a cluster where the bootstrap action put it at a fixed path.
JAR_ENV = "SPARK_KPL_JAR"

_PACKAGE_DIR = Path(__file__).resolve().parent


def _candidates() -> list[Path]:
    found = []
    explicit = os.environ.get(JAR_ENV)
    if explicit:
        found.append(Path(explicit))
    found.append(_PACKAGE_DIR / "jars" / JAR_NAME)  # carried by the installed package
    found.append(_PACKAGE_DIR.parents[1] / "build" / "libs" / JAR_NAME)  # a source checkout
    return found


def jar_path() -> Path:
    """Return the path of the spark-kpl jar that this package carries or finds.

    Looks at ``$SPARK_KPL_JAR``, then the package's own ``jars/`` folder, then ``build/libs`` of the
    source checkout the package was installed from.

    Examples
    --------
    >>> import spark_kpl
    >>> spark_kpl.jar_path().name
    'spark-kpl-0.2.0.jar'
    """
    candidates = _candidates()
    explicit = os.environ.get(JAR_ENV)
    if explicit and not Path(explicit).is_file():
        raise FileNotFoundError(f"${JAR_ENV} is set to {explicit}, which is not a file")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"The spark-kpl jar was not found (tried {tried}). Build it with scripts/build.sh, "
        f"or set ${JAR_ENV} to its path."
    )
