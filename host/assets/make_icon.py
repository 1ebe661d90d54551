"""Draw Toolcell's icon, host/assets/icon.png (256x256 RGBA), with no
dependencies: plain Python 3, zlib and struct.

Usage: python3 host/assets/make_icon.py [OUT.png]

A honeycomb cell (the sandbox) holding a smaller amber cell (the tool), on
a rounded teal square. Each pixel is sampled 4x4 times for smooth edges.
The output is deterministic; `toolcell bundle` embeds the PNG as it is, so
run this only to change the icon, and commit both files.
"""

import math
import os
import struct
import sys
import zlib

SIZE = 256
SAMPLES = 4  # per axis, per pixel

BACKGROUND_TOP = (20, 128, 120)  # teal
BACKGROUND_BOTTOM = (13, 72, 78)  # deep teal
WALL = (240, 249, 247)  # near white
TOOL = (251, 191, 36)  # amber


def rounded_square(x, y, margin, radius):
    """Whether (x, y) is inside the square [margin, SIZE - margin] with corners of `radius`."""
    low, high = margin + radius, SIZE - margin - radius
    dx = max(low - x, 0.0, x - high)
    dy = max(low - y, 0.0, y - high)
    return dx * dx + dy * dy <= radius * radius


def hexagon(cx, cy, radius):
    """The corners of a pointy-top regular hexagon, counter-clockwise on screen."""
    return [
        (cx + radius * math.cos(math.radians(90 + 60 * k)),
         cy - radius * math.sin(math.radians(90 + 60 * k)))
        for k in range(6)
    ]


def inside(polygon, x, y):
    """Whether (x, y) is inside the convex `polygon`."""
    sign = 0
    for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1]):
        cross = (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)
        if cross != 0:
            if sign == 0:
                sign = 1 if cross > 0 else -1
            elif (cross > 0) != (sign > 0):
                return False
    return True


def blend(under, over, alpha):
    return tuple(u + (o - u) * alpha for u, o in zip(under, over))


def pixel(px, py, shapes):
    """The RGBA of pixel (px, py): each sample's colour, averaged."""
    r = g = b = a = 0.0
    for sy in range(SAMPLES):
        for sx in range(SAMPLES):
            x = px + (sx + 0.5) / SAMPLES
            y = py + (sy + 0.5) / SAMPLES
            if not rounded_square(x, y, margin=8, radius=52):
                continue
            t = y / SIZE
            colour = blend(BACKGROUND_TOP, BACKGROUND_BOTTOM, t)
            wall_outer, wall_inner, tool = shapes
            if inside(wall_outer, x, y) and not inside(wall_inner, x, y):
                colour = WALL
            elif inside(tool, x, y):
                colour = TOOL
            r, g, b, a = r + colour[0], g + colour[1], b + colour[2], a + 1
    if a == 0:
        return (0, 0, 0, 0)
    return (round(r / a), round(g / a), round(b / a), round(255 * a / SAMPLES**2))


def png(width, height, rows):
    """A PNG file (8-bit RGBA, no interlace) of `rows`, each a list of RGBA tuples."""
    raw = b"".join(b"\x00" + bytes(channel for rgba in row for channel in rgba) for row in rows)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "icon.png")
    centre = SIZE / 2
    shapes = (
        hexagon(centre, centre, 88),  # the cell's wall, outside
        hexagon(centre, centre, 70),  # the cell's wall, inside
        hexagon(centre, centre, 40),  # the tool inside the cell
    )
    rows = [[pixel(x, y, shapes) for x in range(SIZE)] for y in range(SIZE)]
    with open(out, "wb") as f:
        f.write(png(SIZE, SIZE, rows))
    print(out)


if __name__ == "__main__":
    main()
