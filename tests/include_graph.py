#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the house's layers: every header and source belongs to one room, a room includes only its
own and earlier rooms, and no modules include each other in a loop. Prints what breaks a rule and
exits 1 when anything does.

Two layered graphs:
- the core: include/roofline/<room>/ (public headers, a room's detail/ among them) and
  src/core/<room>/ (sources and private headers), rooms in CORE_ROOMS order;
- the CUDA layer: kernels/, include/roofline/cuda/ (public, its detail/ for what bench uses too)
  and src/cuda/<room>/, rooms in CUDA_ROOMS order. It may include any of the core; the core never
  includes it.
A module is a header and a source of the same stem; a public header's room is its folder (the
core), or that of its source in src/cuda, or CUDA_HEADER_ROOMS for the CUDA layer's header-only
headers; a header with none fails. Outside the layers: src/cli (the top) and bench include only
public headers, kernels/ and their own files, never a private header of src/; tests are white-box
and free.

    python3 tests/include_graph.py [--edges] [repository root]
    python3 tests/include_graph.py --self-test   (the checks on a made-up tree that breaks each)
"""

import os
import re
import sys
from pathlib import Path

# Quoted includes, and angle-bracket ones of our own headers (<roofline/...>).
INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(roofline/[^>]+)>)')
SUFFIXES = {".hpp", ".h", ".cpp", ".cu", ".cuh"}

# The core's rooms, in layer order: a room includes only itself and the rooms before it.
CORE_ROOMS = ["common", "model", "input", "analysis", "cluster", "compare", "output"]
# The CUDA layer's rooms, in layer order (kernels/ is the lowest: plain CUDA, nothing of ours).
CUDA_ROOMS = ["kernels", "runtime", "ops", "probes", "layer"]
# The CUDA layer's public headers with no source of their stem in src/cuda.
CUDA_HEADER_ROOMS = {
    "cuda_error.hpp": "runtime",
    "cuda_owners.hpp": "runtime",
    "device_buffer.hpp": "runtime",
}
# The one header of include/roofline/ that is in no room: it includes every room's.
UMBRELLA = "include/roofline/roofline.hpp"


def files_under(root, directory):
    base = root / directory
    if not base.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in base.rglob("*")
                  if p.is_file() and p.suffix in SUFFIXES)


def rooms_of_files(root):
    """({file: (graph, room)}, [files in no room]) for every header and source of the layers."""
    placed, unplaced = {}, []
    cuda_sources = {}
    for path in files_under(root, "src/cuda"):
        parts = Path(path).parts
        if len(parts) == 4 and parts[2] in CUDA_ROOMS:
            placed[path] = ("cuda", parts[2])
            cuda_sources.setdefault(Path(path).stem, parts[2])
        else:
            unplaced.append(path)
    for path in files_under(root, "kernels"):
        placed[path] = ("cuda", "kernels")
    for path in files_under(root, "src/core"):
        parts = Path(path).parts
        if len(parts) == 4 and parts[2] in CORE_ROOMS:
            placed[path] = ("core", parts[2])
        else:
            unplaced.append(path)
    for path in files_under(root, "include/roofline"):
        parts = Path(path).parts  # include, roofline, room, [detail,] name
        if path == UMBRELLA:
            continue
        if parts[2] == "cuda" and len(parts) in (4, 5) and (len(parts) == 4 or parts[3] == "detail"):
            room = cuda_sources.get(Path(path).stem) or CUDA_HEADER_ROOMS.get(Path(path).name)
            if room:
                placed[path] = ("cuda", room)
                continue
        elif parts[2] in CORE_ROOMS and (len(parts) == 4 or (len(parts) == 5 and parts[3] == "detail")):
            placed[path] = ("core", parts[2])
            continue
        unplaced.append(path)
    return placed, unplaced


def resolve(root, including, name, extra_directories=()):
    """The file `#include "name"` in `including` names: beside it, under include/, or in one of
    `extra_directories` (the including room's include path); None when none exists."""
    candidates = [(Path(including).parent / name).as_posix(), f"include/{name}"]
    candidates += [f"{directory}/{name}" for directory in extra_directories]
    for candidate in candidates:
        if (root / candidate).is_file():
            return candidate
    return None


def include_lines(root, path):
    for number, text in enumerate((root / path).read_text(errors="replace").splitlines(), 1):
        match = INCLUDE.match(text)
        if match:
            yield number, match.group(1) or match.group(2), text.strip()


def search_path(path, graph):
    """The directories a file of `graph` finds private headers in by name alone (its graph's
    rooms, as CMake gives them)."""
    if graph == "core":
        return [f"src/core/{room}" for room in CORE_ROOMS]
    return [f"src/cuda/{room}" for room in CUDA_ROOMS[1:]] + ["kernels"]


def check_layers(root, placed):
    """(module edges per graph, [problems]): every include of a layered file resolved and held to
    the room order."""
    edges = {"core": {}, "cuda": {}}
    problems = []
    for path, (graph, room) in placed.items():
        module = Path(path).stem
        edges[graph].setdefault(module, {})
        order = CORE_ROOMS if graph == "core" else CUDA_ROOMS
        for number, name, text in include_lines(root, path):
            target = resolve(root, path, name, search_path(path, graph))
            if target is None or target == UMBRELLA:
                if target is None and not name.endswith((".h", ".cuh")) and "/" not in name:
                    problems.append(f"{path}:{number}: {text}: no such file in its room's path")
                continue
            if target not in placed:
                problems.append(f"{path}:{number}: {text}: {target} belongs to no room")
                continue
            target_graph, target_room = placed[target]
            if target_graph != graph:
                if graph == "core":
                    problems.append(f"{path}:{number}: {text}: the core includes the CUDA layer")
                continue  # the CUDA layer uses the core: not an edge of its graph
            if order.index(target_room) > order.index(room):
                problems.append(f"{path}:{number}: {text}: {room} includes {target_room}, "
                                f"a room after it ({' < '.join(order)})")
            target_module = Path(target).stem
            if target_module != module:
                edges[graph][module].setdefault(target_module, []).append((path, number, text))
    for graph in edges:
        for targets in list(edges[graph].values()):
            for target in targets:
                edges[graph].setdefault(target, {})
    return edges, problems


def check_outside(root, placed):
    """src/cli and bench: only public headers, kernels/ and their own files."""
    problems = []
    for directory in ("src/cli", "bench"):
        for path in files_under(root, directory):
            for number, name, text in include_lines(root, path):
                own = os.path.normpath(Path(path).parent / name)
                if (root / own).is_file() and Path(own).parts[:len(Path(directory).parts)] == \
                        Path(directory).parts:
                    continue
                public = os.path.normpath(Path("include") / name)
                kernel = os.path.normpath(Path("kernels") / name)
                if (public.startswith("include/") and (root / public).is_file()) or \
                        (kernel.startswith("kernels/") and (root / kernel).is_file()):
                    continue
                problems.append(f"{path}:{number}: {text}: {directory} includes only public "
                                "headers, kernels/ and its own files")
    return problems


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


def self_test():
    """Builds a small tree that breaks each rule once and checks that each is reported."""
    import contextlib
    import io
    import tempfile
    files = {
        "include/roofline/roofline.hpp": '#include "roofline/model/op.hpp"\n',
        "include/roofline/common/error.hpp": "",
        "include/roofline/common/text.hpp": '#include "roofline/output/writers.hpp"\n',
        "include/roofline/model/op.hpp": '#include "roofline/common/error.hpp"\n',
        "include/roofline/model/detail/shapes.hpp": '#include "roofline/model/op.hpp"\n',
        "include/roofline/model/angle.hpp": '#include <roofline/output/writers.hpp>\n',
        "include/roofline/output/writers.hpp": '#include "roofline/model/op.hpp"\n',
        "include/roofline/stray.hpp": "",
        "include/roofline/cuda/detail/owners.hpp": "",
        "src/core/model/op.cpp": '#include "roofline/model/op.hpp"\n#include "loop_b.hpp"\n',
        "src/core/model/loop_b.hpp": '#include "loop_c.hpp"\n',
        "src/core/model/loop_c.hpp": '#include "loop_b.hpp"\n#include "roofline/cuda/x.hpp"\n',
        "include/roofline/cuda/x.hpp": "",
        "src/cuda/runtime/x.cpp": '#include "roofline/cuda/x.hpp"\n#include "probe.hpp"\n',
        "src/cuda/probes/probe.hpp": "",
        "src/cuda/flat.cpp": "",
        "src/cli/main.cpp": '#include "roofline/roofline.hpp"\n#include "../core/model/loop_b.hpp"\n',
        "bench/fit.cpp": '#include "roofline/model/detail/shapes.hpp"\n#include "probe.hpp"\n'
                         '#include "../src/core/model/loop_b.hpp"\n',
    }
    expected = [
        "include/roofline/stray.hpp: belongs to no room",
        "include/roofline/cuda/detail/owners.hpp: belongs to no room",
        "src/cuda/flat.cpp: belongs to no room",
        "common includes output, a room after it",
        "runtime includes probes, a room after it",
        "the core includes the CUDA layer",
        "loop among 2 modules: loop_b, loop_c",
        "src/cli/main.cpp:2",
        "bench/fit.cpp:2",
        "bench/fit.cpp:3",
        "model includes output, a room after it",
    ]
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            status = main([directory])
    missing = [e for e in expected if e not in printed.getvalue()]
    for line in missing:
        print(f"self-test: not reported: {line}")
    if status != 1:
        print(f"self-test: exit status {status}, expected 1")
    if missing or status != 1:
        print(printed.getvalue())
        return 1
    print(f"self-test: all {len(expected)} broken rules reported")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    show_edges = "--edges" in argv
    arguments = [a for a in argv if a != "--edges"]
    root = Path(arguments[0] if arguments else Path(__file__).resolve().parent.parent)
    placed, unplaced = rooms_of_files(root)
    failures = len(unplaced)
    for path in unplaced:
        print(f"{path}: belongs to no room (see tests/include_graph.py's docstring)")
    edges, problems = check_layers(root, placed)
    problems += check_outside(root, placed)
    failures += len(problems)
    for problem in problems:
        print(problem)
    for graph, order in (("core", CORE_ROOMS), ("cuda", CUDA_ROOMS)):
        graph_edges = edges[graph]
        count = sum(len(targets) for targets in graph_edges.values())
        groups = [g for g in strongly_connected(graph_edges) if len(g) > 1]
        files = sum(1 for g, _ in placed.values() if g == graph)
        print(f"{graph} ({' < '.join(order)}): {files} files, {len(graph_edges)} modules, "
              f"{count} module dependencies, {len(groups) or 'no'} include "
              f"loop{'' if len(groups) == 1 else 's'}")
        if show_edges:
            for module in sorted(graph_edges):
                if graph_edges[module]:
                    print(f"  {module} -> {', '.join(sorted(graph_edges[module]))}")
        for group in groups:
            failures += 1
            cycle = one_cycle(graph_edges, group)
            print(f"  loop among {len(group)} modules: {', '.join(group)}")
            print(f"    cycle: {' -> '.join(cycle)}")
            for source, target in zip(cycle, cycle[1:]):
                for path, number, text in graph_edges[source][target]:
                    print(f"      {source} -> {target}: {path}:{number}: {text}")
    print(f"{failures or 'no'} problem{'' if failures == 1 else 's'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
