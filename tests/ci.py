"""Whether the suite runs in CI, where a test that cannot run must fail rather than skip.

CI services do not agree on the value of CI: most say "true", some "1" or "yes". Any value but
"0" or "false" (in any case) counts, so that a runner's spelling cannot turn the guard off.
`make test` asks too (`python -m tests.ci` exits 0 in CI), so the shell and the suite agree."""

import os
import sys


def in_ci() -> bool:
    value = os.environ.get("CI", "")
    return value != "" and value.lower() not in {"0", "false"}


if __name__ == "__main__":
    sys.exit(0 if in_ci() else 1)
