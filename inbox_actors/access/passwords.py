"""Members' passwords: the rule a new one must meet, and argon2id hashes of them (never the password itself).

Hashing and checking are deliberately slow (about 0.2 s of CPU and 64 MiB each), so the service calls them
through `hash_in_thread` / `verify_in_thread`: on a worker thread (argon2 releases the GIL), never on Trio's
loop, where one check would stall every request for its duration.
"""

from __future__ import annotations

import functools
import secrets

import trio
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 10
MAX_LENGTH = 200
# Checks running at once, each holding 64 MiB while it runs: a burst of sign-ins queues here instead of taking
# memory by the gigabyte (Trio's own thread limit is 40).
HASHING_AT_ONCE = 4

# argon2-cffi's defaults are RFC 9106's second recommended profile (argon2id, t=3, 64 MiB, 4 lanes), the one for
# machines that cannot give 2 GiB to each hash: costly enough per guess on a GPU, affordable for a server that
# checks a sign-in now and then. The library moves its defaults with the RFC's advice, and each stored hash names
# its own parameters, so older hashes keep verifying and `needs_rehash` tells when to store a fresh one.
_HASHER = PasswordHasher()
_LIMITER: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar("password_hashing")


def check_new_password(password: str) -> str | None:
    """Why a new password is refused, as a sentence for the person choosing it; None when it will do."""
    if len(password) < MIN_LENGTH:
        return f"A password needs at least {MIN_LENGTH} characters."
    if len(password) > MAX_LENGTH:
        return f"A password has at most {MAX_LENGTH} characters."
    if not password.strip():
        return "A password cannot be only spaces."
    return None


def hash_password(password: str) -> str:
    """The PHC string (`$argon2id$v=19$m=…`): algorithm, parameters, salt and hash in one, as stored."""
    return _HASHER.hash(_secret(password))


def verify_password(stored_hash: str | None, password: str) -> bool:
    """Whether `password` is the one `stored_hash` was made from. No hash (a member who never set a password,
    an unknown email) or a hash that cannot be read still costs one full check, against a dummy hash, so the time
    taken never tells whether an account exists or has a password."""
    if stored_hash is not None:
        try:
            return _HASHER.verify(stored_hash, _secret(password))
        except VerificationError:  # the wrong password (VerifyMismatchError), or a corrupt hash of the right shape
            return False
        except InvalidHashError:
            pass
    try:
        _HASHER.verify(dummy_hash(), _secret(password))
    except VerificationError:
        pass
    return False


def needs_rehash(stored_hash: str) -> bool:
    """The hash was made with other parameters than today's defaults (store a fresh one after a sign-in)."""
    try:
        return _HASHER.check_needs_rehash(stored_hash)
    except InvalidHashError:
        return True


@functools.cache
def dummy_hash() -> str:
    """A hash of a random password nobody knows, with today's parameters: the stand-in an absent hash is checked
    against. Made on first use rather than at import, which every command-line run would pay for."""
    return _HASHER.hash(secrets.token_urlsafe(32))


async def hash_in_thread(password: str) -> str:
    return await trio.to_thread.run_sync(hash_password, password, limiter=_limiter())


async def verify_in_thread(stored_hash: str | None, password: str) -> bool:
    return await trio.to_thread.run_sync(verify_password, stored_hash, password, limiter=_limiter())


def _secret(password: str) -> bytes:
    # A lone surrogate (which a JSON body may carry) has no UTF-8 form; "surrogatepass" gives it one, so every
    # string hashes and checks alike instead of raising.
    return password.encode("utf-8", "surrogatepass")


def _limiter() -> trio.CapacityLimiter:
    # One per Trio run: a limiter belongs to the run that made it (the tests and the CLI start several).
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = trio.CapacityLimiter(HASHING_AT_ONCE)
        _LIMITER.set(limiter)
        return limiter
