"""An edit's diff, word by word, escaped: what a reviewer compares before approving."""

from core.display import word_diff


def test_the_changed_words_are_marked_and_the_kept_ones_plain():
    old, new = word_diff("Checkout is back to normal.", "Checkout is fully back to normal.")
    assert old == "Checkout is back to normal."
    assert new == "Checkout is<ins> fully</ins> back to normal."


def test_a_text_with_nothing_in_common_is_one_text_for_another():
    old, new = word_diff("Checkout is back.", "All clear.")
    assert (old, new) == ("<del>Checkout is back.</del>", "<ins>All clear.</ins>")


def test_markup_in_either_text_is_shown_as_text():
    old, new = word_diff("Say <b>hi</b> now", 'Say <script>alert("x")</script> now')
    assert "<b>" not in old
    assert "<script>" not in new
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in new


def test_texts_too_long_to_compare_word_by_word_are_compared_whole_and_cut():
    old, new = word_diff("a " * 600, "b " * 600)
    assert old.startswith("<del>")
    assert new.startswith("<ins>")
    big = word_diff("x" * 100_000, "y" * 100_000)
    assert all(len(side) < 25_000 for side in big)
