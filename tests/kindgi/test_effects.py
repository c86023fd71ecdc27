import pytest

from kindgi import DefinitionError, Effect, EffectKind

ALL_KINDS = [
    "reads",
    "writes",
    "deletes",
    "network",
    "spawns-run",
    "emits-event",
    "external-side-effect",
    "sensitive-data-egress",
]


def test_there_are_exactly_the_eight_kinds_of_the_design():
    assert [kind.value for kind in EffectKind] == ALL_KINDS


@pytest.mark.parametrize(
    ("factory", "kind"),
    [
        (Effect.reads, "reads"),
        (Effect.writes, "writes"),
        (Effect.deletes, "deletes"),
        (Effect.network, "network"),
        (Effect.spawns_run, "spawns-run"),
        (Effect.emits_event, "emits-event"),
        (Effect.external_side_effect, "external-side-effect"),
        (Effect.sensitive_data_egress, "sensitive-data-egress"),
    ],
)
def test_each_kind_has_a_constructor(factory, kind):
    effect = factory("external:orders")
    assert effect.to_dict() == {"kind": kind, "resource": "external:orders"}
    assert effect.describe() == f"{kind} external:orders"


def test_an_unknown_kind_is_an_error_naming_the_valid_ones():
    with pytest.raises(DefinitionError) as error:
        Effect(kind="mutates", resource="external:orders")
    message = str(error.value)
    assert "'mutates'" in message
    for kind in ALL_KINDS:
        assert kind in message


@pytest.mark.parametrize("resource", ["", "   ", None, 42])
def test_a_resource_must_be_a_non_empty_string(resource):
    with pytest.raises(DefinitionError, match="resource must be a non-empty string"):
        Effect(kind="reads", resource=resource)


def test_the_seeds_mapping_form_is_accepted():
    effect = Effect.from_value({"kind": "writes", "resource": "external:orders"})
    assert effect == Effect.writes("external:orders")
    assert effect.kind is EffectKind.WRITES


@pytest.mark.parametrize(
    "value", [{"kind": "writes"}, {"kind": "writes", "resource": "x", "extra": 1}, "writes", 3]
)
def test_other_values_are_not_effects(value):
    with pytest.raises(DefinitionError, match="must be an Effect or a mapping"):
        Effect.from_value(value)
