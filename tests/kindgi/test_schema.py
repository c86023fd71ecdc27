from kindgi import CamelModel


class Order(CamelModel):
    order_id: str
    total_cents: int


def test_fields_are_camel_case_on_the_wire_and_snake_case_in_python():
    order = Order.model_validate({"orderId": "ord_1", "totalCents": 5})
    assert order.order_id == "ord_1"
    assert Order(order_id="ord_1", total_cents=5) == order
    assert order.model_dump(by_alias=True) == {"orderId": "ord_1", "totalCents": 5}


def test_schema_titles_read_as_words():
    properties = Order.model_json_schema()["properties"]
    assert properties == {
        "orderId": {"title": "Order id", "type": "string"},
        "totalCents": {"title": "Total cents", "type": "integer"},
    }
