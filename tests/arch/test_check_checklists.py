#!/usr/bin/env python3
"""test_check_checklists.py — check_checklists.py fails on each omission.

Copies the files the checker reads (its FILES) into a temporary tree,
checks that the unplanted copy passes, then plants one omission at a time
(an API missing from cli.md, a kind without its trace-format.md row or its
dump row, a literal threshold in report_rules.c, a strstr in graphs.c,
...) and checks that the checker exits 1 printing exactly the violation
lines expected: the file, and the name or line of what is missing.

Usage: test_check_checklists.py [SOURCE_DIR] [--cc COMPILER]
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_checklists  # noqa: E402

CHECKER = os.path.join(HERE, "check_checklists.py")


def line_of(text, needle):
    return text[:text.index(needle)].count("\n") + 1


def plants(root):
    """(what, file, old, new, expected lines); new texts are made so that
    `old` occurs once, and line numbers are those of the planted file."""
    rules = open(os.path.join(root, "analyze/report_rules.c"), encoding="utf-8").read()
    graphs = open(os.path.join(root, "model/graphs.c"), encoding="utf-8").read()
    literal = "if (used < RP_MEMORY_PRESSURE)"
    classify = "static unsigned char classify(unsigned flags) {\n"
    return [
        ("an API missing from cli.md", "docs/cli.md", ", `cudaEventQuery` |", " |",
         ["include/gputrace/apis.h: cudaEventQuery is in neither of docs/cli.md's API "
          "tables (traced, not traced)"]),
        ("an API in both tables", "docs/cli.md", "| `cudaStreamIsCapturing`,",
         "| `cudaEventQuery`, `cudaStreamIsCapturing`,",
         ["docs/cli.md: cudaEventQuery is in both API tables (traced, not traced)"]),
        ("an API under the wrong kind", "docs/cli.md", ", `cudaEventQuery` |", " |",
         ["docs/cli.md: cudaEventQuery is listed under 'free'; apis.h's kind is sync"],
         ("; graph nodes `cudaGraphAddMemFreeNode` |",
          "; graph nodes `cudaGraphAddMemFreeNode`, `cudaEventQuery` |")),
        ("the traced table naming an unknown API", "docs/cli.md",
         "`cudaStreamQuery`, `cudaEventQuery` |", "`cudaStreamQuery`, `cudaEventQuery`, "
         "`cudaEventQuerry` |",
         ["docs/cli.md: the traced table names cudaEventQuerry, which apis.h does not have"]),
        ("a kind without its trace-format.md payload entry", "docs/trace-format.md",
         "- **heap** (", "- heap (",
         ["docs/trace-format.md: kind heap has no payload entry (- **heap**)"]),
        ("a kind missing from trace-format.md's kind row", "docs/trace-format.md",
         "21 graph, 22 heap |", "21 graph |",
         ["docs/trace-format.md: the `kind` row does not list 22 heap"]),
        ("a kind without its dump row", "docs/cli.md", "| kernel_name | `id`, `mangled` |\n",
         "", ["docs/cli.md: kind kernel_name has no row in dump's `| kind | fields |` table"]),
        ("a field missing from its kind's dump row", "docs/cli.md",
         "`inline_count`, `line`, ", "`line`, ",
         ["docs/cli.md: dump's row for frame does not name `inline_count` (a key "
          "model/fields.c gives it)"]),
        ("a kind without its fields.c entry", "model/fields.c",
         "[GT_KIND_HEAP] = LIST(heap),", "",
         ["model/fields.c: kind heap has no entry ([GT_KIND_HEAP] = LIST(...))"]),
        ("a kind without its pin", "tests/unit/test_kinds.c",
         '{GT_KIND_HEAP, 22, "heap", GT_KCLASS_MACHINE},', "",
         ['tests/unit/test_kinds.c: kind heap is not pinned '
          '({GT_KIND_HEAP, 22, "heap", GT_KCLASS_MACHINE})']),
        ("a literal threshold in report_rules.c", "analyze/report_rules.c", literal,
         "if (used < 0.85)",
         [f"analyze/report_rules.c:{line_of(rules, literal)}: numeric literal 0.85 in a rule "
          "(a threshold: name it in analyze/report.h, RP_*)"]),
        ("a threshold report.md does not name", "docs/report.md", "(`RP_CHURN_MIN`) ", "",
         ["docs/report.md: does not name `RP_CHURN_MIN` (a threshold analyze/report_rules.c "
          "uses)"]),
        ("a strstr in graphs.c", "model/graphs.c", classify,
         classify + "  if (strstr(\"Clone\", \"Graph\"))\n    return AC_CLONE;\n",
         [f"model/graphs.c:{line_of(graphs, classify) + 1}: strstr: tell graph APIs apart "
          "by apis.h's flags (GT_AF_*), not by their names"]),
    ]


def run(tree, cc):
    out = subprocess.run([sys.executable, CHECKER, tree, "--cc", cc], capture_output=True,
                         text=True)
    lines = out.stdout.strip().split("\n")
    return out.returncode, [l for l in lines if not l.startswith("check_checklists:")]


def copy_tree(root, dest):
    for rel in check_checklists.FILES:
        src, dst = os.path.join(root, rel), os.path.join(dest, rel)
        if os.path.isdir(src):
            shutil.copytree(src, dst)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(src, dst)


def plant(tree, rel, old, new):
    path = os.path.join(tree, rel)
    text = open(path, encoding="utf-8").read()
    if text.count(old) != 1:
        raise SystemExit(f"{rel}: {old!r} occurs {text.count(old)} times, not once")
    open(path, "w", encoding="utf-8").write(text.replace(old, new))


def main(argv):
    args = argv[1:]
    cc = "cc"
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    root = os.path.abspath(args[0] if args else os.path.join(HERE, "..", ".."))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gt_checklists_") as tmp:
        clean = os.path.join(tmp, "clean")
        copy_tree(root, clean)
        rc, lines = run(clean, cc)
        if rc != 0 or lines != []:
            print(f"FAIL: the unplanted copy: exit {rc}, {lines}")
            failed += 1
        for n, (what, rel, old, new, want, *more) in enumerate(plants(root)):
            tree = os.path.join(tmp, f"plant{n}")
            copy_tree(root, tree)
            plant(tree, rel, old, new)
            for extra_old, extra_new in more:
                plant(tree, rel, extra_old, extra_new)
            rc, lines = run(tree, cc)
            if rc != 1 or lines != want:
                print(f"FAIL: {what}: exit {rc}\n  got:  {lines}\n  want: {want}")
                failed += 1
            else:
                print(f"ok: {what}: {lines[0]}")
    print(f"test_check_checklists: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
