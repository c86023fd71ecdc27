"""What a sweep (expiry, recovery) did, and what it had to leave as it was, and why."""

from dataclasses import dataclass, field


@dataclass
class Sweep:
    done: list = field(default_factory=list)
    # One line for each thing left as it was: the sweep could not act on it here.
    left: list[str] = field(default_factory=list)


def report_left(command, sweep: Sweep) -> None:
    """A management command's lines for what its sweep left, on standard error."""
    for why in sweep.left:
        command.stderr.write(f"Left as it was: {why}")
