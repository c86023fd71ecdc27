"""What a tool touches: effects, and which of them make a tool one that changes things."""

from dataclasses import dataclass
from enum import StrEnum

from kindgi.errors import DefinitionError


class EffectKind(StrEnum):
    READS = "reads"
    WRITES = "writes"
    DELETES = "deletes"
    NETWORK = "network"
    SPAWNS_RUN = "spawns-run"
    EMITS_EVENT = "emits-event"
    EXTERNAL_SIDE_EFFECT = "external-side-effect"
    SENSITIVE_DATA_EGRESS = "sensitive-data-egress"


# A tool with any of these effects changes something, whatever its `mutating` flag says.
MUTATING_EFFECT_KINDS = frozenset(
    {
        EffectKind.WRITES,
        EffectKind.DELETES,
        EffectKind.SPAWNS_RUN,
        EffectKind.EMITS_EVENT,
        EffectKind.EXTERNAL_SIDE_EFFECT,
    }
)

VALID_KINDS_TEXT = ", ".join(kind.value for kind in EffectKind)


@dataclass(frozen=True, kw_only=True)
class Effect:
    """One thing a tool touches, e.g. ``Effect.writes("external:orders")``."""

    kind: EffectKind
    resource: str

    def __post_init__(self):
        try:
            kind = EffectKind(self.kind)
        except ValueError:
            raise DefinitionError(f"effect kind {self.kind!r} is not one of: {VALID_KINDS_TEXT}") from None
        object.__setattr__(self, "kind", kind)
        if not isinstance(self.resource, str) or not self.resource.strip():
            raise DefinitionError(
                f"effect {kind.value!r}: resource must be a non-empty string such as 'external:orders'"
            )

    @property
    def is_mutating(self) -> bool:
        return self.kind in MUTATING_EFFECT_KINDS

    def describe(self) -> str:
        """In short: ``writes external:orders``."""
        return f"{self.kind.value} {self.resource}"

    def sentence(self) -> str:
        """In plain words for a reviewer: ``changes external:orders (writes)``."""
        return effect_sentence(self.kind.value, self.resource)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "resource": self.resource}

    @classmethod
    def from_value(cls, value: "Effect | dict") -> "Effect":
        """Accept an ``Effect`` or the seeds' ``{"kind": …, "resource": …}`` mapping."""
        if isinstance(value, Effect):
            return value
        if isinstance(value, dict) and set(value) == {"kind", "resource"}:
            return cls(kind=value["kind"], resource=value["resource"])
        raise DefinitionError(
            f"effect {value!r} must be an Effect or a mapping with exactly 'kind' and 'resource'"
        )

    @classmethod
    def reads(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.READS, resource=resource)

    @classmethod
    def writes(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.WRITES, resource=resource)

    @classmethod
    def deletes(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.DELETES, resource=resource)

    @classmethod
    def network(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.NETWORK, resource=resource)

    @classmethod
    def spawns_run(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.SPAWNS_RUN, resource=resource)

    @classmethod
    def emits_event(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.EMITS_EVENT, resource=resource)

    @classmethod
    def external_side_effect(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.EXTERNAL_SIDE_EFFECT, resource=resource)

    @classmethod
    def sensitive_data_egress(cls, resource: str) -> "Effect":
        return cls(kind=EffectKind.SENSITIVE_DATA_EGRESS, resource=resource)


PLAIN_WORDS = {
    EffectKind.READS: "reads {resource}",
    EffectKind.WRITES: "changes {resource} (writes)",
    EffectKind.DELETES: "deletes from {resource}",
    EffectKind.NETWORK: "reaches out over the network to {resource}",
    EffectKind.SPAWNS_RUN: "starts another run ({resource})",
    EffectKind.EMITS_EVENT: "sends an event to {resource}",
    EffectKind.EXTERNAL_SIDE_EFFECT: "acts outside Kindgi, on {resource} (an external side effect)",
    EffectKind.SENSITIVE_DATA_EGRESS: "sends sensitive data out, to {resource}",
}


def effect_sentence(kind: str, resource: str) -> str:
    """One effect in plain words, from its kind and resource as they are stored."""
    try:
        return PLAIN_WORDS[EffectKind(kind)].format(resource=resource)
    except ValueError:
        return f"{kind} {resource}"
