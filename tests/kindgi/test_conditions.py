import pytest

from kindgi.conditions import ConditionError, parse_condition


@pytest.mark.parametrize(
    ("text", "arguments", "holds"),
    [
        ("/amountCents > 10000", {"amountCents": 10001}, True),
        ("/amountCents > 10000", {"amountCents": 10000}, False),
        ("/amountCents >= 10000", {"amountCents": 10000}, True),
        ("/amountCents < 5.5", {"amountCents": 5}, True),
        ('/currency == "EUR"', {"currency": "EUR"}, True),
        ('/currency != "EUR"', {"currency": "USD"}, True),
        ("/notify == true", {"notify": True}, True),
        ("/order/lines/0/qty <= 2", {"order": {"lines": [{"qty": 2}]}}, True),
        ("/a~1b == 1", {"a/b": 1}, True),
        ("/amountCents > 10000", {}, False),
        ("/amountCents > 10000", {"amountCents": "lots"}, False),
        ("/amountCents > 10000", {"amountCents": None}, False),
        ('/name > "m"', {"name": "zed"}, True),
        ("/flag > 0", {"flag": True}, False),
        ("/missing != 1", {}, False),
        # Index segments are ASCII digits without leading zeros; anything else names nothing.
        ("/lines/\u00b2 == 1", {"lines": [0, 0, 1]}, False),
        ("/lines/01 == 1", {"lines": [0, 1]}, False),
        ("/lines/" + "9" * 5000 + " == 1", {"lines": [1]}, False),
    ],
)
def test_conditions(text, arguments, holds):
    assert parse_condition(text).holds(arguments) is holds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("amountCents > 1", "is not a condition"),
        ("/amountCents >> 1", "is not a condition"),
        ("/amountCents > lots", "is not a JSON value"),
        ("", "is not a condition"),
    ],
)
def test_bad_conditions_say_what_a_condition_looks_like(text, message):
    with pytest.raises(ConditionError, match=message):
        parse_condition(text)
