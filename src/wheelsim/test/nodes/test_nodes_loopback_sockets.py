"""DDS stays on this machine: every socket a node opens is bound to 127.0.0.1.

env.sh and ``wheelsim run`` once set ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST beside the
loopback Fast DDS profile; with it each participant also bound UDP sockets to 0.0.0.0 and to the
external interface. The sockets are read from /proc (no tool needed).
"""

from __future__ import annotations

import os
import socket
import struct
import time
from pathlib import Path

import pytest

from wheelsim.testing.processes import NodeProcess


def socket_addresses(pid: int) -> list[str]:
    """``address:port`` of every TCP/UDP socket (IPv4 and IPv6) process ``pid`` holds."""
    inodes = set()
    for fd in Path(f'/proc/{pid}/fd').iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith('socket:['):
            inodes.add(target[8:-1])
    found = []
    for table in ('udp', 'tcp', 'udp6', 'tcp6'):
        for line in Path(f'/proc/{pid}/net/{table}').read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] not in inodes:
                continue
            address, port = fields[1].split(':')
            raw = bytes.fromhex(address)
            if len(raw) == 4:
                text = socket.inet_ntop(socket.AF_INET, struct.pack('<I', int(address, 16)))
            else:
                words = struct.unpack('<4I', raw)
                text = socket.inet_ntop(socket.AF_INET6, struct.pack('>4I', *words))
            found.append(f'{text}:{int(port, 16)}')
    return found


@pytest.mark.parametrize('node', ['vehicle_sim', 'localization'])
def test_every_socket_of_a_node_is_on_loopback(ros_domain_id, node):
    assert 'ROS_AUTOMATIC_DISCOVERY_RANGE' not in os.environ, 'env.sh must not set it'
    with NodeProcess(f'wheelsim.nodes.{node}') as process:
        deadline = time.monotonic() + 20
        while f'[{node}]:' not in process.output() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # discovery sockets exist once the participant runs
        addresses = socket_addresses(process.process.pid)
        output = process.output()
    # a profile Fast DDS cannot parse is ignored whole: every interface, Fast DDS's defaults
    assert 'XMLPARSER' not in output, output
    assert addresses, 'no socket found: the check itself is broken'
    outside = [a for a in addresses if not a.startswith('127.0.0.1:')]
    assert not outside, f'{node} has sockets off loopback: {outside} (all: {addresses})'
