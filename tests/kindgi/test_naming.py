import pytest

from kindgi.naming import semver_key


def test_semver_order_follows_the_spec():
    versions = ["1.0.0", "0.1.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "0.10.0", "0.9.9"]
    assert sorted(versions, key=semver_key) == [
        "0.1.0",
        "0.9.9",
        "0.10.0",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-beta",
        "1.0.0",
    ]


def test_a_non_semver_has_no_key():
    with pytest.raises(ValueError, match="not a semantic version"):
        semver_key("1.0")
