#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders the HTML reports in headless Chromium and checks the pictures: not blank (the chart's
colours are there), not cut off (the page ends inside the window, right and bottom).
Exits 77 (ctest: skipped) with the reason when no Chromium can be run.

    render_html.py ROOFLINE_ADVISE SOURCE_DIR WORK_DIR
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77
WIDTH, HEIGHT = 1920, 3200


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG, not interlaced."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        sys.exit(f"{path}: PNG of depth {depth}, colour type {colour}: not read here")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def check(png, page):
    width, height, rows = read_png(png)
    background = rows[0][0]
    def blank(pixel):
        return all(abs(a - b) <= 8 for a, b in zip(pixel, background))
    inked = sum(1 for row in rows[::4] for p in row[::4] if not blank(p))
    if inked < 0.01 * (width // 4) * (height // 4):
        sys.exit(f"{page}: the picture is blank ({inked} inked samples)")
    # The chart's blue (#0072B2) or its orange (#E69F00) must be there: the SVG was drawn.
    chart = sum(1 for row in rows[:900:2] for p in row[::2]
                if abs(p[0] - 0x00) + abs(p[1] - 0x72) + abs(p[2] - 0xB2) < 60
                or abs(p[0] - 0xE6) + abs(p[1] - 0x9F) + abs(p[2] - 0x00) < 60)
    if chart < 50:
        sys.exit(f"{page}: no chart colours in the top of the page ({chart} samples)")
    edge = 12
    right = [p for row in rows for p in row[width - edge:]]
    if not all(blank(p) for p in right):
        sys.exit(f"{page}: something reaches the right edge of a {width}-pixel window: cut off")
    bottom = [p for row in rows[height - edge:] for p in row]
    if not all(blank(p) for p in bottom):
        sys.exit(f"{page}: the page runs past the bottom of a {height}-pixel window")
    return inked


def main():
    advise, source, work = sys.argv[1:4]
    browser = chromium()
    if not browser:
        print("skipped: no Chromium (Debian: apt-get install chromium; scripts/test.sh installs "
              "it where it can)")
        return SKIP
    os.makedirs(work, exist_ok=True)
    decode = os.path.join(source, "examples", "llama2-7b-decode.yaml")
    pages = {"report.html": [decode, "--gpu", "h200"],
             "cmp.html": ["compare", decode, "--gpus", "a100,h100,h200"]}
    for page, args in pages.items():
        path = os.path.join(work, page)
        subprocess.run([advise, *args, "--html", path], check=True, capture_output=True)
        png = path.replace(".html", ".png")
        if os.path.exists(png):
            os.remove(png)
        result = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--no-first-run", f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}",
             "file://" + os.path.abspath(path)],
            capture_output=True, text=True, timeout=120)
        if not os.path.exists(png):
            print(f"skipped: {browser} did not render ({result.returncode}): "
                  f"{result.stderr.strip()[-300:]}")
            return SKIP
        inked = check(png, page)
        print(f"{page}: rendered by {os.path.basename(browser)} at {WIDTH}x{HEIGHT}, "
              f"{inked} inked samples, nothing cut off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
