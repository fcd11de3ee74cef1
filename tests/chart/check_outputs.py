#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The charts and pages the CLI writes: every SVG parses as XML and labels each ridge with a
value; every HTML page is one self-contained file (no script, no external resource) holding
one chart that parses, the op table and the notes.

    check_outputs.py ROOFLINE_ADVISE SOURCE_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def run(advise, *args):
    result = subprocess.run([advise, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"roofline-advise {' '.join(args)}: exit {result.returncode}\n{result.stderr}")


def check_svg(root, where):
    if root.tag != SVG + "svg":
        sys.exit(f"{where}: the root is {root.tag}, not svg")
    texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    ridges = [t for t in texts if t.startswith("ridge ")]
    if not ridges:
        sys.exit(f"{where}: no ridge label")
    for ridge in ridges:
        if not re.fullmatch(r"ridge [0-9.]+ FLOP/B", ridge):
            sys.exit(f"{where}: ridge label `{ridge}` has no value")
    if not any(t.startswith("arithmetic intensity") for t in texts):
        sys.exit(f"{where}: no x axis title")
    points = [e for e in root.iter() if "op" in e.get("class", "").split()]
    if not points:
        sys.exit(f"{where}: no op drawn")
    return len(points)


def check_html(path):
    text = open(path, encoding="utf-8").read()
    if not text.startswith("<!DOCTYPE html>"):
        sys.exit(f"{path}: not an HTML5 document")
    for forbidden in ("<script", "<link", "<img", "@import", "url(http", "src="):
        if forbidden in text:
            sys.exit(f"{path}: holds `{forbidden}`: the page must stand alone")
    if re.search(r'href="(?!#)', text):
        sys.exit(f"{path}: links outside itself")
    charts = re.findall(r"<svg .*?</svg>", text, re.S)
    if len(charts) != 1:
        sys.exit(f"{path}: {len(charts)} charts, expected one")
    check_svg(ET.fromstring(charts[0]), path + " (its chart)")
    if "<table>" not in text:
        sys.exit(f"{path}: no table")


def main():
    advise, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    examples = os.path.join(source, "examples")
    decode = os.path.join(examples, "llama2-7b-decode.yaml")
    out = lambda name: os.path.join(work, name)

    run(advise, decode, "--gpu", "h200", "--plot", out("roofline.svg"), "--html",
        out("report.html"))
    run(advise, "compare", decode, "--gpus", "a100,h100,h200", "--plot", out("cmp.svg"),
        "--html", out("cmp.html"))
    checked = []
    for name in ("roofline.svg", "cmp.svg"):
        checked.append(check_svg(ET.parse(out(name)).getroot(), name))
    for name in ("report.html", "cmp.html"):
        check_html(out(name))
    for example in sorted(os.listdir(examples)):
        if example.endswith(".yaml"):
            svg = out(example.replace(".yaml", ".svg"))
            run(advise, os.path.join(examples, example), "--gpu", "h100", "--sparse", "--plot", svg)
            check_svg(ET.parse(svg).getroot(), svg)
    print(f"charts parse, ridges labelled, pages self-contained ({checked[0]} and {checked[1]} "
          "points in the decode charts)")


if __name__ == "__main__":
    main()
