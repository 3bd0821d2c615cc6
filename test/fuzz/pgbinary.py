"""Binary COPY data for the targeted fuzzer: PGCOPY files, array_recv's
input with random dimensions and bounds, and random damage to either."""

import struct


def pgcopy_binary(rows):
    """A PGCOPY file; each field bytes or None (NULL)."""
    out = bytearray(b"PGCOPY\n\xff\r\n\0" + struct.pack(">ii", 0, 0))
    for fields in rows:
        out += struct.pack(">h", len(fields))
        for f in fields:
            if f is None:
                out += struct.pack(">i", -1)
            else:
                out += struct.pack(">i", len(f)) + f
    out += struct.pack(">h", -1)
    return bytes(out)


def binary_array(elems, elemtype, r):
    """array_recv's input, usually right, with random dimensions and bounds."""
    ndim = 1
    dims = [(len(elems), 1)]
    p = r.random()
    if p < 0.1:
        ndim = 0
        dims = []
        elems = []
    elif p < 0.2:
        dims = [(len(elems), r.choice([0, -1, 2**31 - 1, -2**31, 5]))]
    elif p < 0.3 and len(elems) % 2 == 0 and elems:
        ndim = 2
        dims = [(2, 1), (len(elems) // 2, 1)]
    elif p < 0.35:
        ndim = r.randint(0, 8)
        dims = [(r.randint(0, 3), r.randint(-3, 3)) for _ in range(ndim)]
    elif p < 0.4:
        dims = [(len(elems) + r.choice([-1, 1, 2**30]), 1)]
    has_null = 1 if any(e is None for e in elems) else r.choice([0, 0, 1])
    if r.random() < 0.05:
        elemtype = r.choice([23, 25, 20, 0, 16])
    out = bytearray(struct.pack(">iiI", ndim, has_null, elemtype))
    for n, lb in dims:
        out += struct.pack(">ii", n, lb)
    for e in elems:
        out += struct.pack(">i", -1) if e is None else struct.pack(">i", len(e)) + e
    return bytes(out)


def mutate(data, r):
    """A few random byte flips, cuts or insertions."""
    b = bytearray(data)
    for _ in range(r.randint(1, 4)):
        i = r.randrange(len(b)) if b else 0
        op = r.random()
        if op < 0.5 and b:
            b[i] = r.getrandbits(8)
        elif op < 0.75:
            del b[i:i + r.randint(1, 8)]
        else:
            b[i:i] = bytes(r.getrandbits(8) for _ in range(r.randint(1, 8)))
    return bytes(b)
