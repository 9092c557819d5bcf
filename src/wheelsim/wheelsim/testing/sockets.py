"""Which addresses a process tree listens on (tests): read from ``/proc``, Linux only.

Used to check that a local Ray instance (and everything of a run) stays on loopback:
:func:`bound_sockets` of :func:`descendants` of the process that started it.
"""

from __future__ import annotations

import ipaddress
import os
import struct
from pathlib import Path

_LISTENING = {'tcp': '0A', 'tcp6': '0A', 'udp': '07', 'udp6': '07'}
"""/proc/net table -> the state of a listening TCP socket (LISTEN) or a bound UDP one (CLOSE)."""


def descendants(pid: int) -> set[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            fields = stat.read_text().rsplit(')', 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        found.add(parent)
        todo.extend(children.get(parent, []))
    return found


def bound_sockets(pids: set[int]) -> list[tuple[str, str]]:
    """(process name, local address) of every listening TCP and bound UDP socket of ``pids``."""
    owners = {}
    for pid in pids:
        try:
            name = Path(f'/proc/{pid}/comm').read_text().strip()
            for fd in Path(f'/proc/{pid}/fd').iterdir():
                target = os.readlink(fd)
                if target.startswith('socket:['):
                    owners[target[len('socket:['):-1]] = name
        except OSError:  # ended meanwhile
            continue
    found = []
    for table, listening in _LISTENING.items():
        for line in Path(f'/proc/net/{table}').read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == listening and inode in owners:
                found.append((owners[inode], _address(local.split(':')[0])))
    return found


def _address(hex_address: str) -> str:
    """An address of /proc/net/* (32-bit words in host byte order) as text."""
    packed = b''.join(struct.pack('=I', int(hex_address[i:i + 8], 16))
                      for i in range(0, len(hex_address), 8))
    return str(ipaddress.ip_address(packed))


def is_loopback(address: str) -> bool:
    """127.0.0.0/8 or ::1, also written as an IPv6 socket's ``::ffff:127.0.0.1``."""
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, 'ipv4_mapped', None)
    return (mapped or ip).is_loopback
