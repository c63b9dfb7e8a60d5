"""What every SecretStore does: the same tests on the in-memory store and on a real gnome-keyring."""

from __future__ import annotations

import pytest

from domi_desktop.errors import SecretError
from domi_desktop.ports import SecretStore
from domi_desktop.secrets import MIN_SECRET_LENGTH


def test_it_returns_what_was_set(store: SecretStore) -> None:
    store.set("api-token", "tok-123456")
    assert store.get("api-token") == "tok-123456"


def test_setting_again_replaces_the_value(store: SecretStore) -> None:
    store.set("api-token", "first-value")
    store.set("api-token", "second-value")
    assert store.get("api-token") == "second-value"
    assert store.names() == ["api-token"]


def test_it_keeps_any_unicode_value(store: SecretStore) -> None:
    value = "pässwörd 密码 🔑 with spaces\nand a newline"
    store.set("unicode", value)
    assert store.get("unicode") == value


def test_names_are_sorted_and_hold_no_values(store: SecretStore) -> None:
    store.set("zeta", "value-zeta")
    store.set("Alpha.1", "value-alpha")
    store.set("mid_2", "value-mid")
    assert store.names() == ["Alpha.1", "mid_2", "zeta"]


def test_a_new_store_has_no_names(store: SecretStore) -> None:
    assert store.names() == []


def test_delete_removes_the_value_and_the_name(store: SecretStore) -> None:
    store.set("keep", "value-keep")
    store.set("drop", "value-drop")
    store.delete("drop")
    assert store.names() == ["keep"]
    with pytest.raises(SecretError, match="no secret named 'drop'"):
        store.get("drop")
    assert store.get("keep") == "value-keep"


def test_an_unknown_name_says_how_to_add_it(store: SecretStore) -> None:
    with pytest.raises(SecretError, match=r"no secret named 'nope'.*domi-desktop secret set nope"):
        store.get("nope")


def test_deleting_an_unknown_name_is_an_error(store: SecretStore) -> None:
    with pytest.raises(SecretError, match="no secret named 'nope'"):
        store.delete("nope")


@pytest.mark.parametrize(
    "name", ["", "has space", "a/b", "-leading-dash", "_private", "__domi_index__", "x" * 65, "é"]
)
def test_a_bad_name_is_refused_with_the_rule(store: SecretStore, name: str) -> None:
    for operation in (
        lambda: store.get(name),
        lambda: store.set(name, "some-value"),
        lambda: store.delete(name),
    ):
        with pytest.raises(SecretError, match=r"bad secret name .*letters, digits"):
            operation()


def test_the_longest_name_is_allowed(store: SecretStore) -> None:
    name = "a" * 64
    store.set(name, "long-name-value")
    assert store.get(name) == "long-name-value"


def test_an_empty_value_is_refused(store: SecretStore) -> None:
    with pytest.raises(SecretError, match="empty"):
        store.set("blank", "")
    assert store.names() == []


@pytest.mark.parametrize("value", ["a", "ok", "abc"])
def test_a_value_shorter_than_four_characters_is_refused(store: SecretStore, value: str) -> None:
    with pytest.raises(SecretError) as caught:
        store.set("short", value)
    assert str(caught.value) == (
        f"the value of secret 'short' is {len(value)} character(s) long: secrets need at least "
        f"{MIN_SECRET_LENGTH}, as every value is masked wherever it shows up in a log"
    )
    assert store.names() == []


def test_a_value_of_four_characters_is_kept(store: SecretStore) -> None:
    store.set("pin", "1234")
    assert store.get("pin") == "1234"
