"""JSON of every shape, and JSON shaped nearly like what an endpoint or a tool expects."""

from hypothesis import strategies as st

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)

values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def objects_with(keys: list[str]) -> st.SearchStrategy:
    """Objects whose keys are mostly the expected ones, with values of any shape: near misses."""
    key = st.sampled_from(keys) | st.text(max_size=8) if keys else st.text(max_size=8)
    return st.dictionaries(key, values, max_size=len(keys) + 2)
