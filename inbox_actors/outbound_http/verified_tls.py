"""The TLS context of verified outbound HTTPS through httpx, made once per process.

Making one loads the CA bundle, tens of milliseconds of CPU; every httpx client would otherwise make its own at
construction, even one that only ever speaks plain HTTP (the simulator's webhook lanes post to the service on
this machine). A context is safe to share between clients and connections."""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def verified_context() -> ssl.SSLContext:
    """httpx's own default: its CA bundle, or the one SSL_CERT_FILE / SSL_CERT_DIR name."""
    return httpx.create_ssl_context()
