#!/usr/bin/env python3
"""check_layers.py — the rooms of docs/architecture.md, checked.

Each folder may include only the headers of the rooms below it:

    include/gputrace   the schema, ring and file format (nothing of ours)
    common/            include/gputrace
    preload/           include/gputrace, preload/
    model/             include/gputrace, model/ (and the generated pprof proto)
    collector/         include/gputrace, model/, collector/
    analyze/           include/gputrace, model/, analyze/

A quoted #include is resolved as the compiler would: the including file's
folder first, then include/ (and the generated headers). A header found in
no allowed room is a violation, named with file and line. The CMake link
rules are checked too: the collector never links the CLI's library
(gputrace_analyze), and the model links neither the CLI nor the collector.
Two rules of the sources as well: record kinds are tested only through the
kind table's helpers (schema.h: gt_kind_is_call, gt_kind_in_table, ...),
never by comparing a kind with a GT_KIND_* value by < or >; and no source
names an issue number (the code keeps the rule, the tracker the history).

Usage: check_layers.py [SOURCE_DIR]; exit 0 when every rule holds, 1 with
one line per violation otherwise.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))

ALLOWED = {
    "include/gputrace": ["include"],
    "common": ["include"],
    "preload": ["include", "preload"],
    "model": ["include", "model", "generated"],
    "collector": ["include", "model", "collector"],
    "analyze": ["include", "model", "analyze"],
}
GENERATED = {"profile.pb-c.h", "gputrace/version.h"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(header, folder):
    """The room a quoted include resolves to, or None when it is nowhere."""
    if os.path.exists(os.path.join(ROOT, folder, header)):
        return folder.split("/")[0] if folder != "include/gputrace" else "include"
    if os.path.exists(os.path.join(ROOT, "include", header)):
        return "include"
    if header in GENERATED:
        return "generated" if header == "profile.pb-c.h" else "include"
    for other in ALLOWED:
        if other != folder and os.path.exists(os.path.join(ROOT, other, header)):
            return other.split("/")[0]
    return None


def check_includes():
    bad = []
    for folder, rooms in ALLOWED.items():
        path = os.path.join(ROOT, folder)
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            text = open(os.path.join(path, name), encoding="utf-8").read()
            for m in INCLUDE_RE.finditer(text):
                header = m.group(1)
                room = room_of(header, folder)
                if room not in rooms:
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{folder}/{name}:{line}: includes \"{header}\" "
                               f"({room or 'not found'}), outside {', '.join(rooms)}")
    return bad


def linked(cmake_file, target):
    """Libraries named in target_link_libraries(target ...) calls."""
    text = open(os.path.join(ROOT, cmake_file), encoding="utf-8").read()
    libs = []
    for m in re.finditer(r"target_link_libraries\(\s*" + re.escape(target) + r"\s([^)]*)\)",
                         text):
        libs += m.group(1).split()
    return libs


def check_links():
    bad = []
    rules = [("collector/CMakeLists.txt", "gputrace-collector", {"gputrace_analyze"}),
             ("model/CMakeLists.txt", "gputrace_model", {"gputrace_analyze"})]
    for cmake_file, target, forbidden in rules:
        libs = linked(cmake_file, target)
        if not libs:
            bad.append(f"{cmake_file}: no target_link_libraries({target} ...) found")
        for lib in sorted(forbidden & set(libs)):
            bad.append(f"{cmake_file}: {target} links {lib}")
    return bad


# a comparison, not a shift (1u << GT_KIND_LAUNCH builds a mask of kinds)
KIND_RANGE_RE = re.compile(r"(?<![<>])[<>](?![<>])=? *GT_KIND_(?!COUNT\b)[A-Z_]+\b"
                           r"|\bGT_KIND_(?!COUNT\b)[A-Z_]+ *(?<![<>])[<>](?![<>])")
ISSUE_RE = re.compile(r"\b[Ii]ssues? ?#?[0-9]+")
SOURCE_DIRS = ["include", "common", "preload", "model", "collector", "analyze", "standin",
               "tests", "bench"]


def sources():
    for top in SOURCE_DIRS:
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in sorted(names):
                if name.endswith((".c", ".h", ".cu", ".py")):
                    yield os.path.join(folder, name)


def check_sources():
    bad = []
    for path in sources():
        rel = os.path.relpath(path, ROOT)
        text = open(path, encoding="utf-8", errors="replace").read()
        rules = [(ISSUE_RE, "an issue number")]
        if rel != "include/gputrace/schema.h" and not rel.endswith(".py"):
            rules.append((KIND_RANGE_RE, "a numeric kind test (use schema.h's helpers)"))
        for regex, what in rules:
            for m in regex.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{rel}:{line}: {what}: {m.group(0)!r}")
    return bad


def main():
    bad = check_includes() + check_links() + check_sources()
    for line in bad:
        print(line)
    print(f"check_layers: {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
