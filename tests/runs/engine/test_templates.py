import pytest

from runs.engine.templates import TemplateError, resolve_template


def test_references_are_filled_from_the_input_and_outputs():
    template = {
        "a": {"$ref": "#/input/order/id"},
        "b": [{"$ref": "#/nodes/lookup/output/items/1"}, "literal", 3],
        "c": {"$ref": "#/nodes/lookup/output"},
    }
    outputs = {"lookup": {"items": ["x", "y"]}}
    assert resolve_template(template, flow_input={"order": {"id": "ord_1"}}, outputs=outputs) == {
        "a": "ord_1",
        "b": ["y", "literal", 3],
        "c": {"items": ["x", "y"]},
    }


def test_a_missing_value_is_an_error_naming_the_reference():
    with pytest.raises(TemplateError, match=r"#/input/name has no value \(no 'name' there\)"):
        resolve_template({"$ref": "#/input/name"}, flow_input={}, outputs={})
    with pytest.raises(TemplateError, match="refers to node 'later', which has not run"):
        resolve_template({"$ref": "#/nodes/later/output"}, flow_input={}, outputs={})
