#!/usr/bin/env python3
"""check_checklists.py — the checklists of docs/architecture.md, checked.

Reads the source tree (nothing built) and fails, one line per violation,
when a change left out a step the checklists name:

 a. APIs. Every entry of GT_API_LIST (include/gputrace/apis.h) but the
    META ones (records about the trace, not entry points) is named in
    exactly one of docs/cli.md's two API tables: "What is traced" (the
    table whose header starts `| kind | runtime`) or "Deliberately not
    traced" (`| entry points | why not |`: its first column; the second
    explains, naming traced APIs too). The names come from the C
    preprocessor run on apis.h (X expanded as the code expands it), so a
    list built by token pasting is read as the compiler reads it.
    In the tables a name is a backticked identifier starting cu, cuda,
    __cuda or nvtx; `{A,B}` inside one spells alternatives and `(X)` an
    optional part (`cudaMemcpy{To,From}Symbol(Async)` is four names). A
    backticked span holding `*`, `/` or a space is prose about a family,
    not a name, and is not read. An entry is named when its own name is,
    or, for a per-thread twin, its name less `_ptsz`/`_ptds`. In the
    traced table an entry must sit in a row whose first cell has its kind
    (`stream, event`), and the table names no API apis.h lacks.
 b. Record kinds. Every kind of GT_KIND_LIST (schema.h) but NONE has
    its entry in model/fields.c (`[GT_KIND_X] = LIST(...)`); its value and
    name in docs/trace-format.md's `kind` row (`22 heap`) and a payload
    entry there (`- **heap**`, or one of `- **a / b**`); a row of
    docs/cli.md's `dump` table (`| kind | fields |`, first cell `a, b`)
    naming, backticked, every JSON key fields.c gives the kind (its
    by_kind list and the lists gt_fields picks for it by a record's
    contents, read from fields.c preprocessed); and a pin in
    tests/unit/test_kinds.c, `{GT_KIND_X, value, "name", GT_KCLASS_CLASS}`,
    with `GT_KIND_COUNT == N` for the whole table.
 c. Report rules. In analyze/report_rules.c, from its `---- verdict ----`
    marker to the end (the verdict and every rule), with comments, string
    and character literals removed, a numeric literal is one of: 0 or 1;
    100 as a factor (`100 *` or `* 100`: percent); 1e9 as a divisor
    (`/ 1e9`: ns to s); a shift's count (`>> 32`: a packed key's halves);
    any number inside square brackets (array sizes, indexes). Any other
    is a threshold written as a literal. Each RP_* name that
    analyze/report.h #defines to a number (literals and other RP_* names)
    and that part uses is named in docs/report.md (`RP_X`). The other
    report_*.c files' rules are not checked (their thresholds are RP_*
    constants too, by review).
 d. Graph APIs. model/graphs.c and collector/graph_cache.c tell graph
    calls apart by apis.h's flags (GT_AF_*), never by their names: with
    comments and strings removed, neither calls strstr, strcasestr or
    memmem, gt_api_name(), nor reads gt_apis[...].name or .base.

Usage: check_checklists.py [SOURCE_DIR] [--cc COMPILER]; exit 0 when every
rule holds, 1 with one line per violation otherwise.
"""
import os
import re
import subprocess
import sys

# Every file the rules read, relative to the source tree (the planted test
# copies these): model/ whole, for the headers model/fields.c includes.
FILES = ["include/gputrace", "docs/cli.md", "docs/trace-format.md", "docs/report.md",
         "model", "collector/graph_cache.c",
         "analyze/report.h", "analyze/report_rules.c", "tests/unit/test_kinds.c"]

PROBE = r'''#include "gputrace/schema.h"
#define GTCK_API(name, kind, family, ...) GTCK_A name kind family ;
#define GTCK_KIND(name, value, cls, text) GTCK_K name value cls text ;
GT_API_LIST(GTCK_API)
GT_KIND_LIST(GTCK_KIND)
'''


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def tables(root, cc):
    """(apis, kinds) as the preprocessor expands apis.h and schema.h:
    [(name, kind, family)], [(name, value, class, text)]."""
    out = subprocess.run([cc, "-E", "-P", "-I", os.path.join(root, "include"), "-x", "c",
                          "-"], input=PROBE, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"check_checklists: {cc} -E failed:\n{out.stderr}")
    apis = re.findall(r"GTCK_A (\w+) (\w+) (\w+) ;", out.stdout)
    kinds = [(n, int(v), c, t) for n, v, c, t in
             re.findall(r'GTCK_K (\w+) (\d+) (\w+) "(\w+)" ;', out.stdout)]
    return apis, kinds


def md_table(text, header_re):
    """Body rows (lists of cells) of the first table whose header matches."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.match(header_re, line):
            rows = []
            for body in lines[i + 2:]:
                if not body.startswith("|"):
                    break
                rows.append([c.strip() for c in body.strip().strip("|").split("|")])
            return rows
    return None


def expand(span):
    """The names a backticked span spells: {A,B} alternatives, (X) optional."""
    m = re.search(r"\{([^{}]*)\}", span)
    if m:
        return [n for alt in m.group(1).split(",")
                for n in expand(span[:m.start()] + alt + span[m.end():])]
    m = re.search(r"\(([^()]*)\)", span)
    if m:
        return expand(span[:m.start()] + span[m.end():]) + \
            expand(span[:m.start()] + m.group(1) + span[m.end():])
    return [span]


API_NAME_RE = re.compile(r"(__cuda|cuda|cu|nvtx)[A-Za-z0-9_]*$")


def names_in(cell):
    names = []
    for span in re.findall(r"`([^`]+)`", cell):
        if any(c in span for c in "*/ "):
            continue
        names += [n for n in expand(span) if API_NAME_RE.match(n)]
    return names


def check_apis(root, apis):
    bad = []
    cli = read(root, "docs/cli.md")
    traced = md_table(cli, r"\| kind \| runtime")
    untraced = md_table(cli, r"\| entry points \| why not \|")
    if traced is None or untraced is None:
        return ["docs/cli.md: the API tables (`| kind | runtime`, "
                "`| entry points | why not |`) are missing"]
    row_kinds = {}  # name -> kinds of the traced rows naming it
    for row in traced:
        kinds = {k.strip() for k in row[0].split(",")}
        for cell in row[1:]:
            for n in names_in(cell):
                row_kinds.setdefault(n, set()).update(kinds)
    not_traced = {n for row in untraced for n in names_in(row[0])}
    known = set()
    for name, kind, family in apis:
        if family == "META":
            continue
        doc_names = [name, re.sub(r"_(ptsz|ptds)$", "", name)]
        known.update(doc_names)
        in_traced = [n for n in doc_names if n in row_kinds]
        in_untraced = any(n in not_traced for n in doc_names)
        if not in_traced and not in_untraced:
            bad.append(f"include/gputrace/apis.h: {name} is in neither of docs/cli.md's "
                       "API tables (traced, not traced)")
        elif in_traced and in_untraced:
            bad.append(f"docs/cli.md: {name} is in both API tables (traced, not traced)")
        elif in_traced and kind.lower() not in row_kinds[in_traced[0]]:
            bad.append(f"docs/cli.md: {name} is listed under "
                       f"'{', '.join(sorted(row_kinds[in_traced[0]]))}'; "
                       f"apis.h's kind is {kind.lower()}")
    for n in sorted(set(row_kinds) - known):
        bad.append(f"docs/cli.md: the traced table names {n}, which apis.h does not have")
    return bad


def field_keys(root, cc):
    """Kind name -> the JSON keys model/fields.c gives it, in order."""
    out = subprocess.run([cc, "-E", "-P", "-I", os.path.join(root, "model"), "-I",
                          os.path.join(root, "include"), os.path.join(root, "model/fields.c")],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"check_checklists: {cc} -E model/fields.c failed:\n{out.stderr}")
    arrays = {m.group(1): re.findall(r'\.key = "(\w+)"', m.group(2)) for m in
              re.finditer(r"static const struct gt_field (\w+)\[\] = \{(.*?)\};",
                          out.stdout, re.S)}
    raw = read(root, "model/fields.c")
    picks = re.findall(r"\[GT_KIND_(\w+)\]\s*=\s*LIST\((\w+)\)", raw) + \
        re.findall(r"r->kind == GT_KIND_(\w+)[^;]*?\n\s*l = \(struct list\)LIST\((\w+)\)", raw)
    keys = {}
    for kind, array in picks:
        for key in arrays.get(array, []):
            if key not in keys.setdefault(kind, []):
                keys[kind].append(key)
    return keys


def check_kinds(root, kinds, cc):
    bad = []
    fields = read(root, "model/fields.c")
    keys = field_keys(root, cc)
    fmt = read(root, "docs/trace-format.md")
    kind_row = next((l for l in fmt.split("\n") if re.match(r"\|[^|]*\|[^|]*\| `kind` ", l)),
                    "")
    payloads = {n.strip() for m in re.findall(r"^- \*\*([^*]+)\*\*", fmt, re.M)
                for n in m.split("/")}
    dump = md_table(read(root, "docs/cli.md"), r"\| kind \| fields \|") or []
    dump_rows = {k.strip(): " ".join(row[1:]) for row in dump for k in row[0].split(",")}
    pins = read(root, "tests/unit/test_kinds.c")
    records = [k for k in kinds if k[2] != "NONE"]
    if not kind_row:
        bad.append("docs/trace-format.md: no `kind` field row")
    for name, value, cls, text in records:
        if not re.search(r"\[GT_KIND_" + name + r"\]\s*=\s*LIST\(", fields):
            bad.append(f"model/fields.c: kind {text} has no entry ([GT_KIND_{name}] = LIST(...))")
        if kind_row and not re.search(rf"\b{value} {text}\b", kind_row):
            bad.append(f"docs/trace-format.md: the `kind` row does not list {value} {text}")
        if text not in payloads:
            bad.append(f"docs/trace-format.md: kind {text} has no payload entry (- **{text}**)")
        if text not in dump_rows:
            bad.append(f"docs/cli.md: kind {text} has no row in dump's `| kind | fields |` table")
        else:
            for key in keys.get(name, []):
                if f"`{key}`" not in dump_rows[text]:
                    bad.append(f"docs/cli.md: dump's row for {text} does not name `{key}` "
                               "(a key model/fields.c gives it)")
        pin = f'{{GT_KIND_{name}, {value}, "{text}", GT_KCLASS_{cls}}}'
        if not re.search(r"\s*".join(re.escape(p) for p in re.split(r"\s+", pin)), pins):
            bad.append(f"tests/unit/test_kinds.c: kind {text} is not pinned ({pin})")
    m = re.search(r"GT_KIND_COUNT == (\d+)", pins)
    if not m or int(m.group(1)) != len(kinds):
        bad.append(f"tests/unit/test_kinds.c: GT_KIND_COUNT == {len(kinds)} is not pinned")
    return bad


def code_only(text):
    """C text with comments, string and character literals blanked (lines kept)."""
    def blank(m):
        s = m.group(0)
        if s.startswith("/"):
            return re.sub(r"[^\n]", " ", s)
        return s[0] + " " * (len(s) - 2) + s[-1]
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank,
                  text, flags=re.S)


NUMBER_RE = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+"
                       r"(?:[eE][+-]?\d+)?)[uUlLfF]*(?![\w.])")
RP_DEFINE_RE = re.compile(r"^\s*#\s*define\s+(RP_\w+)\s+([^/\n]*?)\s*(?:/[*/].*)?$", re.M)


def allowed_literal(code, m):
    lit = m.group(1)
    value = float.fromhex(lit) if lit[:2] in ("0x", "0X") else float(lit)
    if value in (0.0, 1.0):
        return True
    before, after = code[:m.start()].rstrip(), code[m.end():].lstrip()
    if value == 100 and (before.endswith("*") or after.startswith("*")):
        return True
    if value == 1e9 and before.endswith("/"):
        return True
    if before.endswith(("<<", ">>")):
        return True
    depth = code.count("[", 0, m.start()) - code.count("]", 0, m.start())
    return depth > 0


def check_rules(root):
    bad = []
    rel = "analyze/report_rules.c"
    text = read(root, rel)
    start = text.find("---- verdict ----")
    if start < 0:
        return [f"{rel}: no `---- verdict ----` marker (where the rules begin)"]
    code = code_only(text)
    scope = code[start:]
    for m in NUMBER_RE.finditer(scope):
        if not allowed_literal(scope, m):
            line = code.count("\n", 0, start + m.start()) + 1
            bad.append(f"{rel}:{line}: numeric literal {m.group(0)} in a rule (a threshold: "
                       "name it in analyze/report.h, RP_*)")
    numeric = {name for name, value in RP_DEFINE_RE.findall(read(root, "analyze/report.h"))
               if value and re.fullmatch(r"[\s()<>*/+-]*",
                                         NUMBER_RE.sub("", re.sub(r"\bRP_\w+", "", value)))}
    doc = read(root, "docs/report.md")
    for name in sorted(numeric & set(re.findall(r"\bRP_\w+\b", scope))):
        if f"`{name}`" not in doc:
            bad.append(f"docs/report.md: does not name `{name}` (a threshold {rel} uses)")
    return bad


NAME_TEST_RE = re.compile(r"\b(strstr|strcasestr|memmem|gt_api_name)\s*\(|"
                          r"\bgt_apis\s*\[[^\]]*\]\s*\.\s*(name|base)\b")


def check_graph_names(root):
    bad = []
    for rel in ["model/graphs.c", "collector/graph_cache.c"]:
        code = code_only(read(root, rel))
        for m in NAME_TEST_RE.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            bad.append(f"{rel}:{line}: {m.group(0).rstrip('(').strip()}: tell graph APIs "
                       "apart by apis.h's flags (GT_AF_*), not by their names")
    return bad


def check(root, cc):
    apis, kinds = tables(root, cc)
    return check_apis(root, apis) + check_kinds(root, kinds, cc) + check_rules(root) + \
        check_graph_names(root)


def main(argv):
    args = argv[1:]
    cc = "cc"
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    root = os.path.abspath(args[0] if args else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    bad = check(root, cc)
    for line in bad:
        print(line)
    print(f"check_checklists: {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
