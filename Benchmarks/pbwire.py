"""Protocol-buffer wire format, the few pieces the benchmark and soak fixtures need to write
Mapbox Vector Tiles (shared by make_fixture.py and soak.d/fixture.py)."""


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(d):
    return (d << 1) ^ (d >> 63)


def key(number, wire):
    return varint((number << 3) | wire)


def field_bytes(number, payload):
    return key(number, 2) + varint(len(payload)) + payload


def field_varint(number, value):
    return key(number, 0) + varint(value)


def string_value(s):
    """A vector-tile Value holding a string (bytes or str)."""
    return field_bytes(1, s.encode() if isinstance(s, str) else s)


def int_value(i):
    """A vector-tile Value holding an int_value."""
    return field_varint(4, i)
