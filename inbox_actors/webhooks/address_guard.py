"""Which webhook URLs the service accepts and which addresses it may connect to (SSRF protection).

A webhook URL is the customer's, so the service must not become a way to reach its own network: the cloud
metadata address, loopback, private and link-local ranges and every other non-public range are refused,
including their IPv6 disguises (`::ffff:127.0.0.1` is judged as 127.0.0.1, and so are the IPv4 addresses
embedded in NAT64 64:ff9b::/96, 6to4 2002::/16 and IPv4-compatible ::/96 addresses). Only `https://` is
accepted, except towards the operator's allow-list of networks (`WEBHOOK_ALLOWED_NETWORKS`, for tests and
local receivers), which may be reached over any address and with `http://` too.

The address is judged twice: when the settings are saved (`check_url_resolving`, so the customer hears
about a bad URL at once) and every time a connection is opened (`addresses_to_connect`), because what a
name resolves to can change after it was saved (DNS rebinding). The transport connects to exactly the
addresses `addresses_to_connect` returned, never resolving the name a second time.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import trio

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
SocketAddress = tuple  # what getaddrinfo gives: (host, port) or (host, port, flowinfo, scope_id)

MAX_URL_LENGTH = 2048
# The syntax `check_url` accepts, as a JSON Schema pattern: http(s), printable ASCII without spaces,
# backslashes or a #fragment, no user@ in the host part.
URL_PATTERN = r'^https?://[!"$-.0->A-\[\]-~]+(?:[/?][!"$-\[\]-~]*)?$'
DEFAULT_RESOLVE_TIMEOUT = 3.0
DEFAULT_PORTS = {"http": 80, "https": 443}

NOT_PUBLIC = "webhooks are only sent to public addresses"
HTTPS_ONLY = "the URL must start with https:// (http:// is accepted only for this server's own allowed networks)"


class InvalidEndpointUrl(ValueError):
    """The URL is not one webhooks may be sent to; the message is a sentence for the API user."""


class DestinationRefused(Exception):
    """At connect time, the host resolved to an address the guard refuses; nothing was sent. The message
    names the address and why ("127.0.0.1 is a loopback address")."""

    def __init__(self, reason: str, address: Address) -> None:
        super().__init__(reason)
        self.address = address


class UnresolvedHost(OSError):
    """The host name has no address (or the resolver gave none in time): a network problem, worth a retry."""


@dataclass(frozen=True, slots=True)
class EndpointUrl:
    """A checked webhook URL, split into what the transport needs."""

    scheme: str          # "http" or "https"
    host: str            # a lower-case name or an IP address without brackets
    port: int
    target: str          # path and query, "/" when the URL has no path
    host_header: str     # host[:port] as the Host header carries it (brackets for IPv6, no default port)
    url: str             # the URL as given


def parse_networks(text: str) -> tuple[Network, ...]:
    """The networks of a comma- or space-separated CIDR list (`127.0.0.0/8, ::1/128`); ValueError names a bad
    entry."""
    networks = []
    for entry in re.split(r"[\s,]+", text.strip()):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry))
        except ValueError as err:
            raise ValueError(f"{entry!r} is not a network in CIDR notation ({err})") from None
    return tuple(networks)


# -- the address policy -------------------------------------------------------------------------------------

def _ranges(*pairs: tuple[str, str]) -> tuple[tuple[Network, str], ...]:
    return tuple((ipaddress.ip_network(cidr), kind) for cidr, kind in pairs)


# Most specific first: the first range holding an address names it. Anything else that is not globally
# routable (documentation, benchmarking, IETF protocol ranges...) falls to the catch-all in `_kind_of`.
_REFUSED_V4 = _ranges(
    ("0.0.0.0/32", "the unspecified address"),
    ("0.0.0.0/8", "a 'this network' address (0.0.0.0/8)"),
    ("127.0.0.0/8", "a loopback address"),
    ("10.0.0.0/8", "a private address"),
    ("172.16.0.0/12", "a private address"),
    ("192.168.0.0/16", "a private address"),
    ("169.254.169.254/32", "the cloud metadata address (link-local)"),
    ("169.254.0.0/16", "a link-local address"),
    ("100.64.0.0/10", "a shared carrier-grade NAT address"),
    ("224.0.0.0/4", "a multicast address"),
    ("255.255.255.255/32", "the broadcast address"),
    ("240.0.0.0/4", "a reserved address"),
)
_REFUSED_V6 = _ranges(
    ("::/128", "the unspecified address"),
    ("::1/128", "a loopback address"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("fc00::/7", "a unique local address"),
    ("ff00::/8", "a multicast address"),
)
_IPV4_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 address stands for, with the name of the form, if it is one of those forms."""
    if address in _IPV4_MAPPED:
        return address.ipv4_mapped, "IPv4-mapped"
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF), "NAT64"
    if address.sixtofour is not None:
        return address.sixtofour, "6to4"
    if address in _IPV4_COMPATIBLE and int(address) > 1:   # :: and ::1 are themselves, not embeddings
        return ipaddress.IPv4Address(int(address)), "IPv4-compatible"
    return None


def _kind_of(address: Address) -> str | None:
    """What a refused address is ("a loopback address"), or None for a public one."""
    for network, kind in _REFUSED_V4 if address.version == 4 else _REFUSED_V6:
        if address in network:
            return kind
    if address.is_reserved or not address.is_global:
        return "a special-purpose address, not a public one"
    return None


def refusal_reason(address: Address) -> str | None:
    """Why no webhook may go to `address` ("127.0.0.1 is a loopback address"), or None when it is public.
    Knows nothing of the allow-list: that is `AddressGuard`'s."""
    if address.version == 6:
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            ipv4, form = embedded
            kind = _kind_of(ipv4)
            shown = f"::ffff:{ipv4}" if form == "IPv4-mapped" else address   # as people write it
            return None if kind is None else f"{shown} is the {form} form of {ipv4}, {kind}"
    kind = _kind_of(address)
    return None if kind is None else f"{address} is {kind}"


# -- the URL ------------------------------------------------------------------------------------------------

# Letters, digits, hyphens and (leniently: some internal names have them) underscores; 63 per label.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST_NAME = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}\.?")
# A last label of digits or hex is an IPv4 address in a form inet_aton takes (127.1, 0x7f000001) but a URL
# should not use; refusing it keeps every IPv4 literal in the one form the checks below understand.
_NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+")
_FORBIDDEN_CHARACTER = re.compile(r"[\x00-\x20\x7f\\]")


def _split_host_and_port(netloc: str, scheme: str) -> tuple[str, Address | None, int]:
    if "@" in netloc:
        raise InvalidEndpointUrl("the URL must not contain a user name or password")
    if netloc.startswith("["):
        end = netloc.find("]")
        host, rest = netloc[1:end], netloc[end + 1:]
        try:
            address: Address | None = ipaddress.IPv6Address(host) if end > 0 and "%" not in host else None
        except ValueError:
            address = None
        if address is None:
            raise InvalidEndpointUrl(f"the URL's host [{host}] is not a valid IPv6 address")
    else:
        host, colon, port_text = netloc.partition(":")
        rest = colon + port_text
        host = host.lower()
        if not host:
            raise InvalidEndpointUrl("the URL has no host")
        try:
            address = ipaddress.IPv4Address(host)
        except ValueError:
            address = None
        if address is None:
            if not _HOST_NAME.fullmatch(host) or len(host.rstrip(".")) > 253:
                raise InvalidEndpointUrl(f"the URL's host {host} is not a valid host name")
            if _NUMERIC_LABEL.fullmatch(host.rstrip(".").rsplit(".", 1)[-1]):
                raise InvalidEndpointUrl(f"the URL's host {host} is not a valid IPv4 address or host name")
    if rest in ("", ":"):
        return host, address, DEFAULT_PORTS[scheme]
    port_text = rest[1:]
    if not rest.startswith(":") or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidEndpointUrl("the URL's port must be a number from 1 to 65535")
    return host, address, int(port_text)


def _parse_url(url: str) -> tuple[EndpointUrl, Address | None]:
    if len(url) > MAX_URL_LENGTH:
        raise InvalidEndpointUrl(f"the URL is longer than {MAX_URL_LENGTH} characters")
    if not url.isascii() or _FORBIDDEN_CHARACTER.search(url):
        raise InvalidEndpointUrl("the URL must be plain ASCII without spaces or backslashes "
                                 "(percent-encode other characters, use punycode for international names)")
    try:
        parts = urlsplit(url)
    except ValueError:                       # an unclosed "[" and the like
        raise InvalidEndpointUrl("the URL is not well formed") from None
    if parts.scheme not in DEFAULT_PORTS or not url[len(parts.scheme):].startswith("://"):
        raise InvalidEndpointUrl("the URL must start with https://")
    if "#" in url:
        raise InvalidEndpointUrl("the URL must not have a #fragment (it is never sent to the server)")
    host, address, port = _split_host_and_port(parts.netloc, parts.scheme)
    shown_host = f"[{host}]" if address is not None and address.version == 6 else host
    host_header = shown_host if port == DEFAULT_PORTS[parts.scheme] else f"{shown_host}:{port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return EndpointUrl(parts.scheme, host, port, target, host_header, url), address


# -- the guard ----------------------------------------------------------------------------------------------

class AddressGuard:
    """Judges webhook URLs and the addresses behind them; `allowed_networks` are exempt from every rule."""

    def __init__(self, allowed_networks: Sequence[Network] = (), *,
                 resolve_timeout: float = DEFAULT_RESOLVE_TIMEOUT) -> None:
        self.allowed_networks = tuple(allowed_networks)
        self.resolve_timeout = resolve_timeout

    def is_allowed(self, address: Address) -> bool:
        """Whether `address` is in an allowed network (an IPv4-mapped address also by the IPv4 it maps)."""
        if address.version == 6 and address.ipv4_mapped is not None and self.is_allowed(address.ipv4_mapped):
            return True
        # Checked by version: `in` across versions compares the bare integers.
        return any(network.version == address.version and address in network for network in self.allowed_networks)

    def refusal(self, address: Address, scheme: str) -> str | None:
        """Why a connection to `address` with `scheme` is refused, or None when it may be made."""
        if self.is_allowed(address):
            return None
        reason = refusal_reason(address)
        if reason is None and scheme == "http":
            return f"{address} is not in an allowed network, and only those may be reached with http://"
        return reason

    def check_url(self, url: str) -> EndpointUrl:
        """The URL split into its parts, when its syntax is acceptable and an IP-literal host is a permitted
        address. A host name passes here (it cannot be judged without DNS): `check_url_resolving` judges it.
        InvalidEndpointUrl otherwise."""
        endpoint, address = _parse_url(url)
        if address is not None:
            if self.is_allowed(address):
                return endpoint
            reason = refusal_reason(address)
            if reason is not None:
                raise InvalidEndpointUrl(f"{NOT_PUBLIC}: {reason}")
        if endpoint.scheme == "http" and (address is not None or not self.allowed_networks):
            raise InvalidEndpointUrl(HTTPS_ONLY)
        return endpoint

    async def check_url_resolving(self, url: str) -> EndpointUrl:
        """`check_url`, then the host resolved now and every address it has judged (the check when the
        settings are saved). InvalidEndpointUrl when any address is refused or the name does not resolve."""
        endpoint = self.check_url(url)
        try:
            await self.addresses_to_connect(endpoint)
        except DestinationRefused as err:
            if refusal_reason(err.address) is None:     # public, refused only for want of https://
                raise InvalidEndpointUrl(HTTPS_ONLY) from None
            raise InvalidEndpointUrl(f"{NOT_PUBLIC}: {endpoint.host} resolves to a refused address ({err})") from None
        except UnresolvedHost as err:
            raise InvalidEndpointUrl(str(err)) from None
        return endpoint

    async def addresses_to_connect(self, endpoint: EndpointUrl) -> list[tuple[int, SocketAddress]]:
        """The (family, sockaddr) pairs to try, in the resolver's order, resolved now.

        If ANY address is refused, the whole destination is (DestinationRefused): a name that mixes a public
        answer with a private one is a DNS-rebinding attempt, not a receiver to fall back from.
        UnresolvedHost when the name has no address or no answer came within `resolve_timeout`."""
        answers = None
        with trio.move_on_after(self.resolve_timeout):
            try:
                answers = await trio.socket.getaddrinfo(endpoint.host, endpoint.port, type=trio.socket.SOCK_STREAM)
            except trio.socket.gaierror:
                raise UnresolvedHost(f"the host {endpoint.host} does not resolve") from None
        if answers is None:
            raise UnresolvedHost(f"the host {endpoint.host} does not resolve "
                                 f"(no answer within {self.resolve_timeout:g} s)")
        addresses: list[tuple[int, SocketAddress]] = []
        for family, _type, _proto, _canonname, sockaddr in answers:
            if (family, sockaddr) in addresses:
                continue
            address = ipaddress.ip_address(sockaddr[0])
            reason = self.refusal(address, endpoint.scheme)
            if reason is not None:
                raise DestinationRefused(reason, address)
            addresses.append((family, sockaddr))
        if not addresses:
            raise UnresolvedHost(f"the host {endpoint.host} does not resolve")
        return addresses
