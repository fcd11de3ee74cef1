#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds the core to its own words: no string literal of src/core or include/roofline names a
command-line flag (`--seq-len`), every option it names by its field (`config_options::seq_len`)
(of an owner the table knows: config_options, compare_request, ...) is in
src/cli/option_words.cpp's table, and every entry of that table is named somewhere. Prints
each breach and exits 1 when there is one.

    python3 tests/core_words.py [repository root]
"""

import re
import sys
from pathlib import Path

STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")
FIELD = re.compile(r"\b([a-z][a-z0-9_]*::[a-z][a-z0-9_]*)\b")
TABLE_ENTRY = re.compile(r'\{"([a-z0-9_]+::[a-z0-9_]+)", "[^"]*"\}')


# The structs (and calls) whose fields the core names as options: the table's owners and any new
# one must be among these, so that a field of an owner the table has never heard of is caught.
OWNERS = {"choose_gpu", "compare_request", "config_options", "describe_local_gpu",
          "measure_options", "model_options", "output_format", "pipeline_options",
          "serving_question", "spec_catalog"}


def literals(path):
    """(line number, text) of each string literal outside comments (a `//` inside a literal is
    the literal's)."""
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        position = 0
        while position < len(line):
            string = STRING.search(line, position)
            comment = line.find("//", position)
            if string is None or (comment != -1 and comment < string.start()):
                break
            yield number, string.group(0)
            position = string.end()


def main(argv):
    root = Path(argv[0] if argv else Path(__file__).resolve().parent.parent)
    table = set(TABLE_ENTRY.findall((root / "src/cli/option_words.cpp").read_text()))
    owners = OWNERS | {field.split("::")[0] for field in table}
    problems, used = [], set()
    files = sorted((root / "src/core").rglob("*.[ch]pp")) + sorted(
        p for p in (root / "include/roofline").rglob("*.hpp") if "cuda" not in p.parts)
    for path in files:
        for number, text in literals(path):
            where = f"{path.relative_to(root)}:{number}"
            for flag in FLAG.findall(text):
                problems.append(f"{where}: names the flag {flag}: name the option's field "
                                "(config_options::seq_len) and map it in src/cli/option_words.cpp")
            for field in FIELD.findall(text):
                if field.split("::")[0] not in owners:
                    continue  # not an option (std::string, cache_state::cold)
                used.add(field)
                if field not in table:
                    problems.append(f"{where}: {field} is not in src/cli/option_words.cpp's table")
    for field in sorted(table - used):
        problems.append(f"src/cli/option_words.cpp: {field} is named nowhere in the core")
    for problem in problems:
        print(problem)
    print(f"{len(files)} files read, {len(used)} option fields named, "
          f"{len(problems) or 'no'} problem{'' if len(problems) == 1 else 's'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
