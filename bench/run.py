"""One workload in one variant, in this process: set Django up on the database the environment
names, migrate it, run the workload, print its figures as JSON on the last line.

    python -m bench.run W1 sqlite [--quick] [--repetitions N]
"""

import json
import sys


def main(argv: list[str]) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    from bench import workloads

    workload, variant, *options = argv
    if "--repetitions" in options:
        # One round of several: `python -m bench` alternates Kindgi's rounds with its peers'.
        workloads.REPETITIONS = int(options[options.index("--repetitions") + 1])
    call_command("migrate", verbosity=0, interactive=False)
    figures = workloads.WORKLOADS[workload, variant](quick="--quick" in options)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
