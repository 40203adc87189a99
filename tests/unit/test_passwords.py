"""Members' passwords: the rule for a new one, and argon2id hashing that never raises on a wrong or unreadable
input."""

import pytest

from inbox_actors.access import passwords

# The service's own argon2 parameters, not the tests' cheap ones (tests/conftest.py).
pytestmark = pytest.mark.real_password_cost


@pytest.mark.parametrize("password, refusal", [
    ("", "at least 10 characters"),
    ("123456789", "at least 10 characters"),
    ("x" * 201, "at most 200 characters"),
    (" " * 10, "only spaces"),
    ("\t \n" * 5, "only spaces"),
])
def test_new_password_rule_refuses_with_a_sentence(password, refusal):
    sentence = passwords.check_new_password(password)
    assert sentence is not None and refusal in sentence and sentence.endswith(".")


@pytest.mark.parametrize("password", ["1234567890", "x" * 200, "  spaced out passphrase  ", "pässwörd-ñ-日本語"])
def test_new_password_rule_accepts(password):
    assert passwords.check_new_password(password) is None


def test_hash_then_verify_round_trip():
    stored = passwords.hash_password("correct horse battery")
    assert stored.startswith("$argon2id$")
    assert "correct horse battery" not in stored
    assert passwords.verify_password(stored, "correct horse battery") is True
    assert passwords.hash_password("correct horse battery") != stored  # a fresh salt each time
    assert passwords.needs_rehash(stored) is False


@pytest.mark.parametrize("attempt", ["correct horse batterY", "", "correct horse battery ", "\ud800"])
def test_wrong_password_is_false(attempt):
    stored = passwords.hash_password("correct horse battery")
    assert passwords.verify_password(stored, attempt) is False


@pytest.mark.parametrize("stored", [
    None,                                                          # never set
    "",
    "garbage",
    "$argon2id$v=19$m=65536,t=3,p=4$bad$bad",                      # the right shape, unreadable parts
    "$2b$12$abcdefghijklmnopqrstuuabcdefghijklmnopqrstuvwxyz01234",  # another algorithm's hash
])
def test_missing_or_garbage_hash_is_false(stored):
    assert passwords.verify_password(stored, "correct horse battery") is False


def test_hash_made_with_weaker_parameters_verifies_and_asks_for_a_rehash():
    from argon2 import PasswordHasher

    old = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash("correct horse battery")
    assert passwords.verify_password(old, "correct horse battery") is True
    assert passwords.needs_rehash(old) is True
    assert passwords.needs_rehash("garbage") is True


def test_a_lone_surrogate_hashes_and_verifies_instead_of_raising():
    stored = passwords.hash_password("abc\ud800defghij")
    assert passwords.verify_password(stored, "abc\ud800defghij") is True
    assert passwords.verify_password(stored, "abc\udfffdefghij") is False


def test_dummy_hash_is_made_once_with_todays_parameters():
    assert passwords.dummy_hash() is passwords.dummy_hash()
    assert passwords.needs_rehash(passwords.dummy_hash()) is False


async def test_thread_helpers_give_the_same_answers():
    stored = await passwords.hash_in_thread("correct horse battery")
    assert await passwords.verify_in_thread(stored, "correct horse battery") is True
    assert await passwords.verify_in_thread(stored, "wrong horse battery") is False
    assert await passwords.verify_in_thread(None, "correct horse battery") is False
