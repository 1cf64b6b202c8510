"""Which network addresses agentcli's own requests (WebFetch) may reach, and a resolver that enforces it.

By default only public internet addresses: loopback, private (RFC 1918, unique-local), link-local
(the cloud metadata address 169.254.169.254 among them), shared, reserved, multicast and unspecified
addresses are refused, unless `[web_fetch] allow_private_hosts` names the host, the address or a
network holding it. A host name is resolved once and EVERY address it resolves to must be allowed;
the connection then goes to those checked addresses (the resolver hands them to aiohttp), so a
second lookup that answers differently (DNS rebinding) is never made. aiohttp is imported lazily.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp.abc import AbstractResolver

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class BlockedAddressError(OSError):
    """A host resolved to an address WebFetch may not reach; `str()` says which and how to allow it."""


@dataclass(frozen=True, slots=True)
class WebFetchLimits:
    """The WebFetch settings a tool call reads (`[web_fetch]`), with the defaults of `default_config.toml`."""

    allow_private_hosts: tuple[str, ...] = ()
    max_download_bytes: int = 5_000_000
    max_output_chars: int = 100_000
    timeout_seconds: float = 30.0
    max_redirects: int = 5


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Public addresses, plus the hosts and networks the person allowed."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = field(default=())

    @classmethod
    def from_allowed(cls, entries: Iterable[str]) -> AddressPolicy:
        """Entries are host names (`localhost`), addresses (`127.0.0.1`) or networks (`10.0.0.0/8`)."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            text = entry.strip().strip("[]")
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                hosts.add(text.lower().rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def refusal(self, host: str, address: str) -> str | None:
        """Why `host` at `address` may not be reached, or None when it may."""
        ip = _unmapped(ipaddress.ip_address(address.split("%", 1)[0]))
        if ip.is_global and not ip.is_multicast:
            return None
        if host.lower().rstrip(".") in self.hosts:
            return None
        if any(ip in net for net in self.networks if net.version == ip.version):
            return None
        what = f"{host} is" if host.strip("[]") == address else f"{host} resolves to {ip},"
        return (
            f"{what} a {_kind(ip)} address: WebFetch only reaches public addresses "
            f"unless [web_fetch] allow_private_hosts lists it"
        )

    def literal_refusal(self, host: str) -> str | None:
        """For a URL whose host is an IP address (no lookup happens): why it is refused, or None."""
        try:
            ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
        except ValueError:
            return None  # a name: the resolver checks what it resolves to
        return self.refusal(host, host.strip("[]"))


def _unmapped(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _kind(ip: IPAddress) -> str:
    for kind in ("loopback", "link_local", "unspecified", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return "non-public"


def guarded_resolver(policy: AddressPolicy) -> AbstractResolver:
    """An aiohttp resolver that resolves with the system and refuses hosts with any address `policy` refuses."""
    from aiohttp.abc import AbstractResolver, ResolveResult
    from aiohttp.resolver import ThreadedResolver

    class GuardedResolver(AbstractResolver):
        def __init__(self) -> None:
            self.inner = ThreadedResolver()

        async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                          ) -> list[ResolveResult]:
            found: list[Any] = await self.inner.resolve(host, port, family)
            for entry in found:
                if (why := policy.refusal(host, str(entry["host"]))) is not None:
                    raise BlockedAddressError(why)
            return found

        async def close(self) -> None:
            await self.inner.close()

    return GuardedResolver()
