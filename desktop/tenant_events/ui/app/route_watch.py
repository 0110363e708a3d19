"""Whether this machine has a default route, and a netlink socket that wakes when routes or links change.

Qt-free and stdlib-only (the wake watcher turns its readiness into a slot). "Online" here means a default
route exists, IPv4 or IPv6: the same test the desktop's network monitors make, without their libraries.
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path

NETLINK_ROUTE = 0
RTMGRP_LINK = 0x1
RTMGRP_IPV4_ROUTE = 0x40
RTMGRP_IPV6_ROUTE = 0x400


def has_default_route(proc: Path = Path("/proc/net")) -> bool:
    """A default route in the kernel's IPv4 or IPv6 table (of this process's network namespace)."""
    with contextlib.suppress(OSError):
        for line in (proc / "route").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 7 and fields[1] == "00000000" and fields[7] == "00000000":
                return True
    with contextlib.suppress(OSError):
        for line in (proc / "ipv6_route").read_text().splitlines():
            fields = line.split()
            if len(fields) == 10 and fields[0] == "0" * 32 and fields[1] == "00" and fields[9] != "lo":
                return True
    return False


class RouteWatch:
    """A non-blocking netlink subscription to link and route changes."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    @classmethod
    def open(cls) -> RouteWatch | None:
        """None where netlink is not available (not Linux, or a sandbox that forbids it)."""
        family = getattr(socket, "AF_NETLINK", None)
        if family is None:
            return None
        try:
            sock = socket.socket(family, socket.SOCK_RAW, NETLINK_ROUTE)
        except OSError:
            return None
        try:
            sock.bind((0, RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE))
        except OSError:
            sock.close()
            return None
        sock.setblocking(False)
        return cls(sock)

    def fileno(self) -> int:
        return self._sock.fileno()

    def drain(self) -> None:
        """Read every pending change message: only the table's state after them matters."""
        while True:
            try:
                if not self._sock.recv(65536):
                    return
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return

    def online(self) -> bool:
        return has_default_route()

    def close(self) -> None:
        self._sock.close()
