#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the include loops between modules of src/core and of src/cuda, and the includes by which
a room of src/core reaches one after it; exits 1 when there is either.

A module is a header and a source of the same stem: include/roofline/foo.hpp with
src/core/<room>/foo.cpp (and src/core/<room>/foo.hpp), include/roofline/cuda/foo.hpp with
src/cuda/foo.cpp (and src/cuda/foo.hpp). Module A depends on module B when a file of A includes a
file of B with `#include "..."`. Two graphs are checked, each on its own: src/core + include/roofline,
and src/cuda + include/roofline/cuda (an include from one graph into the other is not an edge).
Every strongly connected group of more than one module is a loop; for each, one cycle is printed
with the include lines that make it. src/core's rooms are layers (CORE_ROOMS, in order): a room's
files include only its own and earlier rooms' modules.

    python3 tests/include_graph.py [--edges] [repository root]
"""

import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SUFFIXES = {".hpp", ".h", ".cpp", ".cu", ".cuh"}

# src/core's rooms, in layer order: a room includes only itself and the rooms before it. Their
# private headers are included by name alone, from any room.
CORE_ROOMS = ["common", "model", "input", "analysis", "compare", "output"]

# name: (directories whose files are modules, how a quoted include resolves: prefix → directory)
GRAPHS = {
    "core (src/core's rooms + include/roofline)": (
        ["include/roofline"] + [f"src/core/{room}" for room in CORE_ROOMS],
        {"roofline/": "include/roofline"},
    ),
    "cuda (src/cuda + include/roofline/cuda)": (
        ["include/roofline/cuda", "src/cuda"],
        {"roofline/cuda/": "include/roofline/cuda"},
    ),
}


def module_files(root, directories):
    """{file path relative to root: module stem} for the files directly in `directories`."""
    files = {}
    for directory in directories:
        for path in sorted((root / directory).iterdir()):
            if path.is_file() and path.suffix in SUFFIXES:
                files[path.relative_to(root).as_posix()] = path.stem
    return files


def resolve(root, including, name, prefixes, files):
    """The module file `#include "name"` in `including` refers to, or None (outside the graph)."""
    for prefix, directory in prefixes.items():
        if name.startswith(prefix) and "/" not in name[len(prefix):]:
            candidate = f"{directory}/{name[len(prefix):]}"
            return candidate if candidate in files else None
    candidate = (Path(including).parent / name).as_posix()  # beside the including file
    if candidate in files:
        return candidate
    if "/" not in name:  # a private header of another room of the same graph
        for path in files:
            if Path(path).name == name and not path.startswith("include/"):
                return path
    return None


def build(root, directories, prefixes):
    """{module: {dependency: [(file, line number, include text)]}}."""
    files = module_files(root, directories)
    edges = {module: {} for module in files.values()}
    for path, module in files.items():
        for number, text in enumerate((root / path).read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(text)
            if not match:
                continue
            target = resolve(root, path, match.group(1), prefixes, files)
            if target is None or files[target] == module:
                continue
            edges[module].setdefault(files[target], []).append((path, number, text.strip()))
    return edges


def strongly_connected(edges):
    """Tarjan's strongly connected components, each a sorted list of modules."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(start):
        # Iterative, so that deep graphs do not hit Python's recursion limit.
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return groups


def one_cycle(edges, group):
    """A shortest cycle through the group's first module, staying inside the group."""
    members, start = set(group), group[0]
    previous, frontier = {start: None}, [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(edges[node]):
                if successor == start:
                    path = [node]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if successor in members and successor not in previous:
                    previous[successor] = node
                    following.append(successor)
        frontier = following
    return [start]


def rooms_broken(root, directories, prefixes, edges):
    """The includes by which a room of src/core reaches a room after it in CORE_ROOMS (each room
    a layer over those before it): [(from room, to room, file, line, text)]. A module's room is
    that of its file in src/core; a public header with no source there has none."""
    room_of = {}
    for path, module in module_files(root, directories).items():
        parts = Path(path).parts
        if parts[:2] == ("src", "core") and len(parts) == 4:
            room_of[module] = parts[2]
    broken = []
    for source, targets in edges.items():
        for target, lines in targets.items():
            a, b = room_of.get(source), room_of.get(target)
            if a and b and CORE_ROOMS.index(b) > CORE_ROOMS.index(a):
                broken += [(a, b, path, number, text) for path, number, text in lines]
    return broken


def main(argv):
    show_edges = "--edges" in argv
    arguments = [a for a in argv if a != "--edges"]
    root = Path(arguments[0] if arguments else Path(__file__).resolve().parent.parent)
    loops = 0
    for name, (directories, prefixes) in GRAPHS.items():
        edges = build(root, directories, prefixes)
        count = sum(len(targets) for targets in edges.values())
        groups = [g for g in strongly_connected(edges) if len(g) > 1]
        print(f"{name}: {len(edges)} modules, {count} module dependencies, "
              f"{len(groups) or 'no'} include loop{'' if len(groups) == 1 else 's'}")
        if show_edges:
            for module in sorted(edges):
                if edges[module]:
                    print(f"  {module} -> {', '.join(sorted(edges[module]))}")
        for group in groups:
            loops += 1
            cycle = one_cycle(edges, group)
            print(f"  loop among {len(group)} modules: {', '.join(group)}")
            print(f"    cycle: {' -> '.join(cycle)}")
            for source, target in zip(cycle, cycle[1:]):
                for path, number, text in edges[source][target]:
                    print(f"      {source} -> {target}: {path}:{number}: {text}")
        if any(d.startswith("src/core/") for d in directories):
            broken = rooms_broken(root, directories, prefixes, edges)
            print(f"  src/core's rooms ({' < '.join(CORE_ROOMS)}): "
                  f"{len(broken) or 'no'} include{'' if len(broken) == 1 else 's'} back up")
            for a, b, path, number, text in broken:
                loops += 1
                print(f"    {a} -> {b}: {path}:{number}: {text}")
    return 1 if loops else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
