#!/usr/bin/env python3
"""Rewrite an uncompressed pprof profile written before commit ac8e92e into
the bytes the tool writes since: the mapping names the program as a virtual
object ("[NAME]" for the path ".../NAME") and the trace's comment ends with
"; executable PATH".  Every other byte is copied as it was, so comparing the
result with today's output checks the samples, locations and functions byte
for byte.

usage: pprof_as_since_ac8e92e.py EXECUTABLE_PATH < old.pb > new.pb
"""
import sys


def entry(s):
    """A string_table entry of the top-level Profile: field 6, wire type 2."""
    n = len(s)
    out = b"\x32"
    while True:
        if n < 128:
            return out + bytes([n]) + s
        out += bytes([n & 127 | 128])
        n >>= 7


def main():
    exe = sys.argv[1].encode()
    b = sys.stdin.buffer.read()
    old_mapping = entry(exe)
    if b.count(old_mapping) != 1:
        sys.exit("pprof_as_since_ac8e92e: the mapping's path %r is not in the profile once" % exe)
    b = b.replace(old_mapping, entry(b"[" + exe.rsplit(b"/", 1)[-1] + b"]"))
    # The comment: the string_table entry that starts "memtrace trace ".
    at = b.find(b"memtrace trace ")
    if at < 2:
        sys.exit("pprof_as_since_ac8e92e: no trace comment in the profile")
    # Its length is one varint byte before the text for comments under 128
    # bytes, two otherwise; find the entry's start by trying both.
    for k in (1, 2):
        start = at - k - 1
        if start < 0 or b[start] != 0x32:
            continue
        n, shift = 0, 0
        for i in range(k):
            n |= (b[start + 1 + i] & 127) << shift
            shift += 7
        text = b[at:at + n]
        if entry(text) == b[start:at + n]:
            b = b[:start] + entry(text + b"; executable " + exe) + b[at + n:]
            break
    else:
        sys.exit("pprof_as_since_ac8e92e: the trace comment's entry is malformed")
    sys.stdout.buffer.write(b)


main()
