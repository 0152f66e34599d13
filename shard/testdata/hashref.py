#!/usr/bin/env python3
"""Reference implementation of shard.Hash (see shard/shard.go), written from
its documentation with Python integers, to produce the test vectors of
TestHashVectors. Usage: python3 hashref.py "192.0.2.2:40001" "192.0.2.1:7174" ...
(pairs of endpoints; IPv6 as [addr]:port)."""
import ipaddress
import sys

M = (1 << 64) - 1


def fmix64(h):
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & M
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & M
    h ^= h >> 33
    return h


def parse(s):
    host, port = s.rsplit(":", 1)
    ip = ipaddress.ip_address(host.strip("[]"))
    return ip, int(port)


def key(ep):
    # netip.AddrPort.Compare: IPv4 before IPv6, then address, then port.
    ip, port = ep
    return (ip.version, int(ip), port)


def as16(ip):
    if ip.version == 4:
        return (0xffff << 32) | int(ip)  # ::ffff:a.b.c.d
    return int(ip)


def hash_(a, b):
    lo, hi = sorted([a, b], key=key)
    h = 0x9e3779b97f4a7c15
    for ip in (lo[0], hi[0]):
        v = as16(ip)
        h = fmix64(h ^ (v >> 64))
        h = fmix64(h ^ (v & M))
    return fmix64(h ^ ((lo[1] << 16) | hi[1]))


args = sys.argv[1:]
for i in range(0, len(args), 2):
    a, b = parse(args[i]), parse(args[i + 1])
    print(args[i], args[i + 1], "0x%016x" % hash_(a, b))
