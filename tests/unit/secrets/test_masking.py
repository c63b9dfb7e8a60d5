"""Masking secret values in text and in output that arrives in chunks."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from domi_desktop.secrets import Masker, mask


def test_it_replaces_every_occurrence_of_every_value() -> None:
    text = "token=abcd1234 again abcd1234, password hunter22"
    assert mask(text, ["abcd1234", "hunter22"]) == "token=*** again ***, password ***"


def test_every_value_is_masked_however_short() -> None:
    # The stores refuse values under 4 characters; one written by another tool is masked anyway.
    assert mask("ok abc abcd", ["ok", "abc", "", "abcd"]) == "*** *** ***"
    assert mask("a-b", ["a"]) == "***-b"
    stream = Masker(["ab"]).stream()
    assert stream.feed(b"xa") + stream.feed(b"by") + stream.flush() == b"x***y"


def test_the_longer_of_two_overlapping_values_wins() -> None:
    assert mask("secret-long and secret", ["secret", "secret-long"]) == "*** and ***"


def test_values_with_regex_characters_are_taken_literally() -> None:
    assert mask("a.b*c+d a-b-c-d", ["a.b*c+d"]) == "*** a-b-c-d"


def test_no_values_leave_the_text_alone() -> None:
    assert mask("anything", []) == "anything"
    stream = Masker([]).stream()
    assert stream.feed(b"raw") + stream.flush() == b"raw"


def test_a_value_split_across_chunks_is_masked() -> None:
    stream = Masker(["s3cr3t-token"]).stream()
    out = b"".join(stream.feed(bytes([byte])) for byte in b"<s3cr3t-token>") + stream.flush()
    assert out == b"<***>"


def test_output_is_held_back_no_longer_than_needed() -> None:
    stream = Masker(["abcdef"]).stream()
    # Only the last len(value) - 1 bytes may still start a value.
    assert stream.feed(b"0123456789") == b"01234"
    assert stream.feed(b"") == b""
    assert stream.flush() == b"56789"


def test_non_ascii_values_are_masked_in_their_utf8_bytes() -> None:
    stream = Masker(["clé-secrète"]).stream()
    data = "la clé-secrète !".encode()
    out = stream.feed(data[:5]) + stream.feed(data[5:9]) + stream.feed(data[9:]) + stream.flush()
    assert out.decode() == "la *** !"


@given(
    values=st.lists(st.text("ab", min_size=1, max_size=6), max_size=3),
    text=st.text("abc", max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=6),
)
def test_streaming_in_any_chunks_equals_masking_it_all_at_once(
    values: list[str], text: str, cuts: list[int]
) -> None:
    masker = Masker(values)
    data = text.encode()
    bounds = [0, *sorted(min(c, len(data)) for c in cuts), len(data)]
    stream = masker.stream()
    out = b"".join(stream.feed(data[a:b]) for a, b in itertools.pairwise(bounds))
    out += stream.flush()
    assert out.decode() == masker.mask(text)
