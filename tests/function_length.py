#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints every function of the C++ and CUDA sources longer than LIMIT lines, its body from the
line of its opening brace to that of its closing one; exits 1 when there is one.

A function is a brace block at namespace or class scope that follows a parameter list: a free
function, a member function defined in or out of its class, a constructor (with or without a
member initialiser list), an operator. Lambdas and blocks inside a function count towards the
function they are in. Comments, string and character literals (raw strings too) and preprocessor
lines are blanked first, so a brace inside one is not seen.

    python3 tests/function_length.py [--limit N] [repository root]
    python3 tests/function_length.py --self-test     # checks the reader on made-up sources
"""

import re
import sys
from pathlib import Path

LIMIT = 100
FOLDERS = ["src", "include", "tests", "bench", "kernels"]
SUFFIXES = {".hpp", ".h", ".cpp", ".cu", ".cuh"}
CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum)\b")
INIT_LIST = re.compile(r"\)\s*(noexcept\s*)?:\s*[^;]*[\w>]\s*$")
CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*$")


def blanked(text):
    """`text` with comments, literals and preprocessor lines replaced by spaces, newlines kept."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (line_start and c in " \t" and text[i:].lstrip(" \t")[:1] == "#"):
            # A preprocessor line, with its continuations.
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delimiter = text[i + 2:text.find("(", i + 2)]
            j = text.find(")" + delimiter + '"', i)
            j = n if j < 0 else j + len(delimiter) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def is_function_head(head):
    """Whether the text before a `{` at namespace or class scope opens a function body."""
    head = head.strip()
    if not head or CONTAINER.search(head.split("(")[0]) and "(" not in head:
        return False
    if CONTAINER.match(head) or re.match(r"^(template\s*<.*>\s*)?(class|struct|union|enum)\b", head, re.S):
        return False
    if head.endswith("=") or head.endswith(",") or "(" not in head:
        return False
    # A constructor's initialiser list: `) : a(x), b{y}`; trailing qualifiers; `-> type`.
    return re.search(r"\)\s*(const|noexcept(\([^)]*\))?|override|final|mutable|&|&&|\s|->\s*[\w:<>,\s*&]+)*$", head) is not None \
        or re.search(r"\)\s*:\s*[\w:]+\s*[({]", head) is not None


def functions(text):
    """[(name, first line, last line)] of the functions at namespace or class scope."""
    code = blanked(text)
    found = []
    stack = []  # per open brace: "container", "function" or "other"
    head_start = 0
    i = 0
    while i < len(code):
        c = code[i]
        if c == "{":
            inside_function = any(kind == "function" for kind, _ in stack)
            if inside_function:
                stack.append(("other", i))
            else:
                head = code[head_start:i]
                if stack and stack[-1][0] == "other" or re.search(r"=\s*$", head):
                    stack.append(("other", i))
                elif is_function_head(head) and not CONTROL.search(head.split("(")[0]):
                    stack.append(("function", i))
                    name = [w for w in re.findall(r"([~\w:<>=!+\-*/\[\]]+)\s*\(", head) if w != "__launch_bounds__"]
                    found_name = name[0] if name else "?"
                    stack[-1] = ("function", (i, found_name))
                elif CONTAINER.search(head):
                    stack.append(("container", i))
                elif INIT_LIST.search(head):
                    # A member's brace initialiser in a constructor's list: the head goes on.
                    stack.append(("initialiser", head_start))
                    i += 1
                    continue
                else:
                    stack.append(("other", i))
            head_start = i + 1
        elif c == "}":
            kind, where = stack.pop() if stack else ("other", i)
            if kind == "function":
                start, name = where
                found.append((name, code.count("\n", 0, start) + 1, code.count("\n", 0, i) + 1))
            head_start = where if kind == "initialiser" else i + 1
        elif c == ";" and not any(kind == "function" for kind, _ in stack):
            head_start = i + 1
        i += 1
    return found


def self_test():
    """Checks `functions` on sources whose functions' spans are known; returns 0 when it reads
    them all right."""
    def lines(n):
        return "".join(f"  x += {i};\n" for i in range(n))

    source = (
        "#include <x>\n"                                            # 1
        "namespace a {\n"                                           # 2
        "int f(int x) {\n" + lines(99) + "}\n"                     # 3..103: 101 lines
        "struct s {\n"                                              # 104
        "  s() : v{1}, w(2) {\n" + lines(3) + "  }\n"              # 105..109
        "  int g() const noexcept { return '}'; }\n"                # 110
        "  int v, w;\n"                                             # 111
        "};\n"                                                      # 112
        "auto h() -> int {\n"                                       # 113
        "  const char *t = \"{{{\"; // }\n"                       # 114
        "  auto l = [&] { return R\"(})\"; };\n"                  # 115
        "  /* { */ if (x) { y(); }\n"                               # 116
        "  return 0;\n"                                             # 117
        "}\n"                                                       # 118
        "int table[] = {1, 2};\n"                                   # 119
        "} // namespace a\n")
    found = {name: (first, last) for name, first, last in functions(source)}
    expected = {"f": (3, 103), "s": (105, 109), "g": (110, 110), "h": (113, 118)}
    if found != expected:
        print(f"self-test: read {found}, expected {expected}")
        return 1
    print("self-test: every function's span read right")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    limit = LIMIT
    arguments = list(argv)
    if "--limit" in arguments:
        at = arguments.index("--limit")
        limit = int(arguments[at + 1])
        del arguments[at:at + 2]
    root = Path(arguments[0] if arguments else Path(__file__).resolve().parent.parent)
    long_ones, count = [], 0
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            for name, first, last in functions(path.read_text(errors="replace")):
                count += 1
                if last - first + 1 > limit:
                    long_ones.append((last - first + 1, path.relative_to(root).as_posix(), first, name))
    print(f"{count} functions read; {len(long_ones) or 'none'} over {limit} lines")
    for lines, path, first, name in sorted(long_ones, reverse=True):
        print(f"  {path}:{first}: {name}: {lines} lines")
    return 1 if long_ones else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
