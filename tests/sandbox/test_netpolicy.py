"""netpolicy.decide, the proxy's one decision: which addresses a request may reach under a grant.
Pure: the resolver and "is this address mine" are injected."""

from __future__ import annotations

import ipaddress

from cerveau_tui.sandbox.netpolicy import assigned_here, decide, parse_entry


def _resolver(table: dict[str, list[str]]):
    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError("no such name")
        return table[host]

    return resolve


PUBLIC = _resolver({"github.com": ["140.82.121.4"], "evil.example": ["203.0.113.9"]})


def _not_mine(ip) -> bool:
    return False


def test_a_granted_name_reaches_its_resolved_addresses() -> None:
    v = decide(("github.com",), "github.com", 443, PUBLIC, _not_mine)
    assert v.addresses == ("140.82.121.4",)


def test_a_name_the_grant_does_not_hold_is_refused() -> None:
    v = decide(("github.com",), "evil.example", 443, PUBLIC, _not_mine)
    assert v.addresses == () and v.refusal == "not granted"


def test_a_port_in_the_grant_refuses_the_other_ports() -> None:
    assert decide(("github.com:443",), "github.com", 443, PUBLIC, _not_mine).addresses
    assert not decide(("github.com:443",), "github.com", 22, PUBLIC, _not_mine).addresses


def test_names_compare_as_written_case_and_trailing_dot_aside() -> None:
    assert decide(("github.com",), "GitHub.COM.", 443, PUBLIC, _not_mine).addresses
    # A grant of an address is not a grant of a name that resolves to it, nor of another spelling.
    assert not decide(("140.82.121.4",), "github.com", 443, PUBLIC, _not_mine).addresses
    assert not decide(("127.0.0.1:80",), "127.1", 80, PUBLIC, _not_mine).addresses


def test_any_host_still_refuses_the_hosts_loopback() -> None:
    for host in ("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "0.0.0.0", "::"):
        assert not decide((), host, 8080, PUBLIC, _not_mine).addresses, host


def test_any_host_refuses_link_local_and_this_network() -> None:
    for host in ("169.254.169.254", "fe80::1", "0.1.2.3", "224.0.0.1"):
        assert not decide((), host, 80, PUBLIC, _not_mine).addresses, host


def test_any_host_lets_other_machines_through() -> None:
    assert decide((), "evil.example", 443, PUBLIC, _not_mine).addresses == ("203.0.113.9",)
    assert decide((), "10.1.2.3", 22, PUBLIC, _not_mine).addresses == ("10.1.2.3",)


def test_a_granted_name_that_resolves_to_loopback_is_refused() -> None:
    rebinding = _resolver({"granted.example": ["127.0.0.1", "::1"]})
    v = decide(("granted.example",), "granted.example", 80, rebinding, _not_mine)
    assert v.addresses == () and "grant it by address" in v.refusal


def test_only_the_public_addresses_of_a_mixed_answer_are_kept() -> None:
    mixed = _resolver({"granted.example": ["127.0.0.1", "198.51.100.7"]})
    v = decide(("granted.example",), "granted.example", 80, mixed, _not_mine)
    assert v.addresses == ("198.51.100.7",)


def test_loopback_is_reached_when_the_grant_names_the_address() -> None:
    assert decide(("127.0.0.1:8080",), "127.0.0.1", 8080, PUBLIC, _not_mine).addresses
    assert decide(("[::1]:8080",), "::1", 8080, PUBLIC, _not_mine).addresses
    local = _resolver({"localhost": ["127.0.0.1"]})
    assert decide(("localhost:8080",), "localhost", 8080, local, _not_mine).addresses


def test_an_address_of_this_machine_is_the_hosts_own() -> None:
    mine = ipaddress.ip_address("192.0.2.5")
    v = decide((), "192.0.2.5", 5432, PUBLIC, lambda ip: ip == mine)
    assert not v.addresses
    assert decide(("192.0.2.5:5432",), "192.0.2.5", 5432, PUBLIC, lambda ip: ip == mine).addresses


def test_assigned_here_knows_loopback_and_not_a_documentation_address() -> None:
    assert assigned_here(ipaddress.ip_address("127.0.0.1"))
    assert not assigned_here(ipaddress.ip_address("203.0.113.77"))


def test_a_name_that_does_not_resolve_is_refused_with_the_reason() -> None:
    v = decide((), "nowhere.invalid", 80, PUBLIC, _not_mine)
    assert not v.addresses and v.refusal == "could not resolve"


def test_grant_entries_parse_hosts_ports_and_ipv6() -> None:
    assert parse_entry("GitHub.com") == ("github.com", None)
    assert parse_entry("github.com:443") == ("github.com", 443)
    assert parse_entry("[::1]:80") == ("::1", 80)
    assert parse_entry("::1") == ("::1", None)


def test_any_host_beside_a_named_address_reaches_that_address_and_other_machines() -> None:
    loop = _resolver({"github.com": ["140.82.121.4"]})
    hosts = ("*", "127.0.0.1:8766")
    assert decide(hosts, "127.0.0.1", 8766, loop, _not_mine).addresses == ("127.0.0.1",)
    assert decide(hosts, "github.com", 443, loop, _not_mine).addresses == ("140.82.121.4",)
    other = decide(hosts, "127.0.0.1", 8765, loop, _not_mine)  # not the one the person read
    assert other.addresses == () and "host's own" in other.refusal
