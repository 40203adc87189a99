import hashlib

from inbox_actors.domain.api_keys import KEY_PREFIX, generate_key, has_key_shape, hash_key


def test_keys_carry_the_prefix_and_256_random_bits():
    key = generate_key()
    prefix, _, random_part = key.partition("_")
    assert prefix == KEY_PREFIX
    assert len(random_part) == 43  # 32 bytes, url-safe base64 without padding
    assert has_key_shape(key)
    assert len({generate_key() for _ in range(1000)}) == 1000


def test_only_the_sha256_is_used_for_storage():
    key = generate_key()
    assert hash_key(key) == hashlib.sha256(key.encode()).digest()


def test_shape_check_refuses_near_misses():
    key = generate_key()
    assert not has_key_shape(key[:-1])
    assert not has_key_shape(key + "A")
    assert not has_key_shape("other" + key[len(KEY_PREFIX):])
    assert not has_key_shape(key[:-1] + "é")
    assert not has_key_shape("")
