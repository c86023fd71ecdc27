import pytest

from core.redaction import redact_prompt


@pytest.mark.parametrize(
    ("prompt", "redacted"),
    [
        ("use Authorization: Bearer abc.DEF-123_x please", "use Authorization: Bearer [REDACTED] please"),
        ("header Basic dXNlcjpwYXNz==", "header Basic [REDACTED]"),
        ("my key is sk-proj-abcdefgh1234 ok", "my key is [REDACTED] ok"),
        ("see /home/ada/notes/plan.txt now", "see [LOCAL_PATH] now"),
        ("see /Users/ada/Desktop/a.txt, then", "see [LOCAL_PATH] then"),
        (r"open C:\Users\ada\Documents\x.docx", "open [LOCAL_PATH]"),
        ("nothing secret here", "nothing secret here"),
        ("a sk-short key stays", "a sk-short key stays"),
    ],
)
def test_each_pattern(prompt, redacted):
    assert redact_prompt(prompt) == redacted


def test_configured_secret_values_are_redacted_exactly():
    prompt = "the key 9f8e7d6c5b4a and 9f8e7d6c5b4a again"
    assert redact_prompt(prompt, secrets=["9f8e7d6c5b4a", ""]) == "the key [REDACTED] and [REDACTED] again"
