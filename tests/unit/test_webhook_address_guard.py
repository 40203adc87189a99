"""The webhook address guard: URL syntax, the refused address ranges, the allow-list, and the judgement at
connect time (DNS answers come from trio's custom-resolver hook, so no real DNS is asked except `localhost`)."""

from __future__ import annotations

import ipaddress
import socket

import pytest
import trio

from inbox_actors.webhooks.address_guard import (
    AddressGuard,
    DestinationRefused,
    EndpointUrl,
    InvalidEndpointUrl,
    UnresolvedHost,
    parse_networks,
    refusal_reason,
)

LOCAL = parse_networks("127.0.0.0/8, ::1/128")

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1, a loopback"),
    ("::ffff:10.1.2.3", "IPv4-mapped form of 10.1.2.3, a private"),
    ("::ffff:169.254.169.254", "metadata"),
    ("10.0.0.1", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("fd00::1", "unique local"),
    ("fc00::1", "unique local"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("0.1.2.3", "0.0.0.0/8"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("255.255.255.255", "broadcast"),
    ("240.0.0.1", "reserved"),
    ("64:ff9b::a00:1", "NAT64 form of 10.0.0.1, a private"),
    ("2002:7f00:1::1", "6to4 form of 127.0.0.1, a loopback"),
    ("::7f00:1", "IPv4-compatible form of 127.0.0.1"),
    ("192.0.2.1", "not a public one"),          # documentation
    ("198.18.0.1", "not a public one"),         # benchmarking
    ("2001:db8::1", "not a public one"),        # documentation
    ("fec0::1", "site-local"),
]

PUBLIC = ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "64:ff9b::808:808",
          "2002:808:808::1"]


@pytest.mark.parametrize(("address", "why"), REFUSED)
def test_refused_ranges_name_the_address_and_why(address, why):
    reason = refusal_reason(ipaddress.ip_address(address))
    assert reason is not None and why in reason
    literal = f"[{address}]" if ":" in address else address
    with pytest.raises(InvalidEndpointUrl, match="only sent to public addresses") as raised:
        AddressGuard().check_url(f"https://{literal}/hook")
    assert why in str(raised.value)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass_over_https_only(address):
    literal = f"[{address}]" if ":" in address else address
    assert refusal_reason(ipaddress.ip_address(address)) is None
    assert AddressGuard().check_url(f"https://{literal}/hook").host == address
    with pytest.raises(InvalidEndpointUrl, match="must start with https://"):
        AddressGuard(LOCAL).check_url(f"http://{literal}/hook")


def test_allowed_networks_override_the_ranges_and_permit_http():
    guard = AddressGuard(parse_networks("127.0.0.0/8 10.0.0.0/8"))
    assert guard.check_url("http://127.0.0.1:8080/in").port == 8080
    assert guard.check_url("http://10.9.9.9/in").host == "10.9.9.9"
    assert guard.check_url("http://[::ffff:127.0.0.1]/in").host == "::ffff:127.0.0.1"   # judged as 127.0.0.1
    with pytest.raises(InvalidEndpointUrl, match="192.168.0.1 is a private address"):
        guard.check_url("http://192.168.0.1/in")
    with pytest.raises(InvalidEndpointUrl, match="::1 is a loopback"):
        guard.check_url("https://[::1]/in")


def test_the_url_is_split_for_the_transport():
    guard = AddressGuard()
    assert guard.check_url("HTTPS://Hooks.Example.COM/in/coming?x=1&y=2") == EndpointUrl(
        scheme="https", host="hooks.example.com", port=443, target="/in/coming?x=1&y=2",
        host_header="hooks.example.com", url="HTTPS://Hooks.Example.COM/in/coming?x=1&y=2")
    assert guard.check_url("https://example.com").target == "/"
    assert guard.check_url("https://example.com?q").target == "/?q"
    assert guard.check_url("https://example.com:8443/a").host_header == "example.com:8443"
    assert guard.check_url("https://example.com:443/a").host_header == "example.com"
    v6 = guard.check_url("https://[2606:4700::1111]:8443/a")
    assert (v6.host, v6.port, v6.host_header) == ("2606:4700::1111", 8443, "[2606:4700::1111]:8443")


@pytest.mark.parametrize(("url", "message"), [
    ("https://user:secret@example.com/", "user name or password"),
    ("https://user@example.com/", "user name or password"),
    ("ftp://example.com/", "must start with https://"),
    ("javascript:alert(1)", "must start with https://"),
    ("example.com/hook", "must start with https://"),
    ("https:example.com", "must start with https://"),
    ("https:///path", "no host"),
    ("https://example.com/#frag", "fragment"),
    ("https://example.com:0/", "port"),
    ("https://example.com:65536/", "port"),
    ("https://example.com:8o/", "port"),
    ("https://exa mple.com/", "ASCII"),
    ("https://exämple.com/", "ASCII"),
    ("https://example.com\\@evil.com/", "ASCII"),
    ("https://[::1/", "not well formed"),
    ("https://[fe80::1%25eth0]/", "not a valid IPv6 address"),
    ("https://exa_mple..com/", "not a valid host name"),
    ("https://127.1/", "not a valid IPv4 address"),
    ("https://0x7f000001/", "not a valid IPv4 address"),
    ("https://2130706433/", "not a valid IPv4 address"),
    ("https://example.com/" + "a" * 2048, "longer than 2048"),
])
def test_malformed_urls_are_refused_with_a_sentence(url, message):
    with pytest.raises(InvalidEndpointUrl, match=message):
        AddressGuard(LOCAL).check_url(url)


def test_http_to_a_name_waits_for_resolution_unless_nothing_is_allowed():
    with pytest.raises(InvalidEndpointUrl, match="must start with https://"):
        AddressGuard().check_url("http://receiver.example/")
    assert AddressGuard(LOCAL).check_url("http://receiver.example/").scheme == "http"


def test_parse_networks_reads_a_cidr_list_and_names_a_bad_entry():
    assert parse_networks("") == ()
    assert parse_networks(" 127.0.0.0/8,::1/128  10.0.0.0/8 ,") == (
        ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"), ipaddress.ip_network("10.0.0.0/8"))
    with pytest.raises(ValueError, match="'10.0.0.1/8'"):          # host bits set
        parse_networks("127.0.0.0/8, 10.0.0.1/8")
    with pytest.raises(ValueError, match="'localhost'"):
        parse_networks("localhost")


# -- resolving: at save time and at connect time --------------------------------------------------------------

class FixedAnswers(trio.abc.HostnameResolver):
    """DNS as a table: name -> addresses."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers

    async def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        results = []
        for text in self.answers[name]:
            if ":" in text:
                results.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (text, port, 0, 0)))
            else:
                results.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (text, port)))
        return results

    async def getnameinfo(self, sockaddr, flags):
        raise NotImplementedError


class SilentResolver(FixedAnswers):
    async def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):
        await trio.sleep_forever()


@pytest.fixture
async def dns():
    """The DNS table of this test's trio run (the resolver hook is per run, so nothing to undo)."""
    resolver = FixedAnswers({})
    trio.socket.set_custom_hostname_resolver(resolver)
    return resolver.answers


async def test_addresses_to_connect_returns_the_permitted_sockaddrs(dns):
    dns["hooks.example.com"] = ["93.184.216.34", "2606:2800:220:1::1"]
    endpoint = AddressGuard().check_url("https://hooks.example.com:8443/in")
    assert await AddressGuard().addresses_to_connect(endpoint) == [
        (socket.AF_INET, ("93.184.216.34", 8443)), (socket.AF_INET6, ("2606:2800:220:1::1", 8443, 0, 0))]


async def test_one_refused_answer_refuses_the_whole_destination(dns):
    dns["rebind.example.com"] = ["93.184.216.34", "10.0.0.7"]
    endpoint = AddressGuard().check_url("https://rebind.example.com/in")
    with pytest.raises(DestinationRefused, match="10.0.0.7 is a private address") as raised:
        await AddressGuard().addresses_to_connect(endpoint)
    assert raised.value.address == ipaddress.ip_address("10.0.0.7")
    with pytest.raises(InvalidEndpointUrl, match="rebind.example.com resolves to a refused address"):
        await AddressGuard().check_url_resolving("https://rebind.example.com/in")


async def test_a_name_saved_as_public_is_judged_again_at_connect_time(dns):
    dns["flip.example.com"] = ["93.184.216.34"]
    guard = AddressGuard()
    endpoint = await guard.check_url_resolving("https://flip.example.com/in")
    dns["flip.example.com"] = ["::ffff:169.254.169.254"]
    with pytest.raises(DestinationRefused, match="metadata"):
        await guard.addresses_to_connect(endpoint)


async def test_http_to_a_name_needs_every_address_in_an_allowed_network(dns):
    dns["local.test"] = ["127.0.0.1", "::1"]
    dns["mixed.test"] = ["127.0.0.1", "93.184.216.34"]
    guard = AddressGuard(LOCAL)
    endpoint = await guard.check_url_resolving("http://local.test:8080/in")
    assert [family for family, _ in await guard.addresses_to_connect(endpoint)] == [socket.AF_INET, socket.AF_INET6]
    with pytest.raises(InvalidEndpointUrl, match="must start with https://"):
        await guard.check_url_resolving("http://mixed.test/in")
    with pytest.raises(DestinationRefused, match="only those may be reached with http://"):
        await guard.addresses_to_connect(guard.check_url("http://mixed.test/in"))
    assert await guard.check_url_resolving("https://mixed.test/in")     # all permitted over https


async def test_a_name_that_does_not_resolve_is_refused_at_save_and_a_network_error_at_connect(dns):
    guard = AddressGuard()
    with pytest.raises(InvalidEndpointUrl, match="nowhere.example does not resolve"):
        await guard.check_url_resolving("https://nowhere.example/in")
    with pytest.raises(UnresolvedHost, match="does not resolve"):
        await guard.addresses_to_connect(guard.check_url("https://nowhere.example/in"))


async def test_resolution_is_bounded_by_the_timeout(autojump_clock):
    trio.socket.set_custom_hostname_resolver(SilentResolver({}))
    guard = AddressGuard(resolve_timeout=3)
    started = trio.current_time()
    with pytest.raises(InvalidEndpointUrl, match=r"does not resolve \(no answer within 3 s\)"):
        await guard.check_url_resolving("https://slow.example/in")
    assert trio.current_time() - started == pytest.approx(3)


async def test_real_resolution_of_localhost():
    """The real resolver: localhost is refused unless its addresses are allowed."""
    with pytest.raises(InvalidEndpointUrl, match="loopback"):
        await AddressGuard().check_url_resolving("https://localhost/in")
    endpoint = await AddressGuard(LOCAL).check_url_resolving("http://localhost:9/in")
    assert endpoint.host_header == "localhost:9"
