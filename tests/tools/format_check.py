#!/usr/bin/env python3
"""format_check.py FORMAT FILE: exit 0 iff FILE is a valid document of FORMAT
(issue 23, class 5), else prints why on stderr and exits 1. FORMAT:
  json     RFC 8259 (python's json, strict: UTF-8, no control characters in strings)
  svg      well-formed XML (xml.etree)
  html     UTF-8, no control characters, tags balanced (html.parser), exactly
           two <script> elements (the flame graph's and the tables'), and every
           <svg> inside well-formed XML
  csv      UTF-8, no control characters, every row (python csv) as wide as the
           header; a last line "# PARTIAL: ..." allowed
  folded   UTF-8, no control characters, each line "FRAME;FRAME;... COUNT":
           frames non-empty, COUNT a whole number
  pprof    gzipped profile.proto whose string table is UTF-8 (a decoder of its own)
"""
import csv, gzip, io, json, re, sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

CONTROL = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')

def text(data):
    s = data.decode('utf-8')  # strict: raises on invalid UTF-8
    m = CONTROL.search(s)
    if m:
        raise ValueError('control character %r at %d' % (m.group(), m.start()))
    return s

def check_json(data):
    json.loads(text(data))

def check_svg(data):
    text(data)
    ET.fromstring(data)

VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr'}

class Balance(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.scripts, self.errors = [], 0, []
    def handle_starttag(self, tag, attrs):
        if tag == 'script':
            self.scripts += 1
        if tag not in VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        pass
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append('</%s> closes <%s>' % (tag, self.stack[-1] if self.stack else 'nothing'))
        else:
            self.stack.pop()

def check_html(data):
    s = text(data)
    p = Balance()
    p.feed(s)
    p.close()
    if p.errors:
        raise ValueError(p.errors[0])
    if p.stack:
        raise ValueError('unclosed <%s>' % p.stack[-1])
    if p.scripts != 2:   # the flame graph's and the tables' (report.c's TABLE_SCRIPT)
        raise ValueError('%d <script> elements' % p.scripts)
    for svg in re.findall(r'<svg\b.*?</svg>', s, re.S):
        ET.fromstring(svg.encode())

def check_csv(data):
    s = text(data)
    lines = s.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    if lines and lines[-1].startswith('# PARTIAL: '):
        lines.pop()
    rows = list(csv.reader(io.StringIO('\n'.join(lines) + '\n'), strict=True))
    if not rows:
        raise ValueError('no header')
    if len(rows) != len(lines):
        raise ValueError('%d records on %d lines (a field holds a newline)' % (len(rows), len(lines)))
    for i, r in enumerate(rows):
        if len(r) != len(rows[0]):
            raise ValueError('row %d has %d fields, the header %d' % (i + 1, len(r), len(rows[0])))

FOLDED = re.compile(r'^(.+) ([0-9]+)$')

def check_folded(data):
    for i, line in enumerate(text(data).split('\n')[:-1]):
        m = FOLDED.match(line)
        if not m:
            raise ValueError('line %d is not "stack count": %r' % (i + 1, line[:80]))
        if m.group(1) != '(no backtrace)' and any(f == '' for f in m.group(1).split(';')):
            raise ValueError('line %d has an empty frame' % (i + 1))

def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i

def check_pprof(data):
    b = gzip.decompress(data)
    i, strings = 0, 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError('field %d runs past the end' % field)
            if field == 6:
                b[i:i + n].decode('utf-8')
                strings += 1
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError('wire type %d' % wire)
    if strings == 0:
        raise ValueError('no string table')

def main():
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, 'rb') as f:
        data = f.read()
    try:
        globals()['check_' + fmt](data)
    except Exception as e:  # any refusal of the parser: not a valid document
        print('%s: not valid %s: %s: %s' % (path, fmt, type(e).__name__, e), file=sys.stderr)
        return 1
    return 0

if __name__ == '__main__':
    sys.exit(main())
