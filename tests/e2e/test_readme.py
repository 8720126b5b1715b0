"""The README, followed as a newcomer follows it: its command lines (and
docs/cli.md's) name commands and options that exist, its sample of `report` is what report
prints on the bundled sample (numbers aside), and "tracing your own
program" works: a program built with `nvcc -cudart shared`, as the README
says, is traced and reported with no warning.

Run: python3 test_readme.py BUILD
"""
import os
import re
import subprocess

from gtest import GPUTRACE, TMP, base_env, cmake_cache, eq, main, prog, record, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = open(os.path.join(ROOT, "README.md")).read()


def code_blocks(text):
    return re.findall(r"^```\n(.*?)^```", text, re.M | re.S)


def masked(line):
    """A report line with its figures and column padding taken out: the
    sample's numbers, paths and verdict are one run's (the sample's verdict
    is a near tie), its words and order are the format's."""
    line = re.sub(r"\S+\.gtrace", "FILE", line)
    line = re.sub(r" \(close: [^)]*\)$", "", line)  # the sample's tie may not be this run's
    line = re.sub(r"(transfer|compute|launch|cpu)-bound", "VERDICT", line)
    line = re.sub(r"\d+(\.\d+)?", "#", line)
    return re.sub(r"\s+", " ", line).strip()


def test_report_sample_is_what_report_prints():
    start = README.index("A short piece of `report`")
    sample = code_blocks(README[start:])[0].splitlines()
    if len(sample) < 8:
        raise AssertionError("README's report sample is %d lines" % len(sample))
    # Every launch timed: with the adaptive 1-in-N default the scaled GPU
    # totals depend on the machine's load, and attention and mlp (the same
    # time each) then swap places in the kernel table now and then.
    _, trace = record([prog("infer"), "20"], GPUTRACE_GPU_TIMING_SAMPLE="1")
    p = run([GPUTRACE, "report", trace], base_env(), check_rc=0)
    printed = [masked(l) for l in p.stdout.splitlines()]
    at = 0
    for line in sample:
        if line.strip() in ("…", "..."):
            continue
        want = masked(line)
        if want not in printed[at:]:
            raise AssertionError("README sample line %r is not in report's output (in order):\n%s" %
                                 (line, p.stdout))
        at = printed.index(want, at) + 1


def help_options(command):
    p = run([GPUTRACE, command, "--help"], base_env(), check_rc=0)
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", p.stdout)) | set(re.findall(r"\s(-[a-z]),", p.stdout))


def check_command_lines(blocks, where):
    """Every `gputrace CMD ...` line in these code blocks: CMD is a
    command and each option on the line is one CMD takes (up to a `--`
    that starts the traced program's own arguments). The commands named."""
    seen = []
    for block in blocks:
        for line in block.splitlines():
            m = re.search(r"(?:^|/)gputrace (\w+)(.*)", line)
            if not m or line.lstrip().startswith("scripts/"):
                continue
            command, rest = m.group(1), m.group(2).split(" -- ")[0].split("#")[0]
            accepted = help_options(command)
            for opt in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", rest):
                if opt not in accepted:
                    raise AssertionError("%s: `gputrace %s %s`: %s not in its --help" %
                                         (where, command, rest.strip(), opt))
            seen.append(command)
    return seen


def commands():
    p = run([GPUTRACE], base_env(), check_rc=2)
    return sorted(re.search(r"^commands: (.*)$", p.stderr, re.M).group(1).split())


def test_command_lines_name_real_commands_and_options():
    eq(sorted(set(check_command_lines(code_blocks(README), "README.md"))), commands(), "commands the README shows")
    cli = open(os.path.join(ROOT, "docs", "cli.md")).read()
    synopsis = check_command_lines(code_blocks(cli)[:1], "docs/cli.md's synopsis")
    eq(sorted(set(synopsis)), commands(), "commands in docs/cli.md's synopsis")
    check_command_lines(code_blocks(cli), "docs/cli.md")


def test_own_program_built_as_the_readme_says():
    src = os.path.join(ROOT, "samples", "infer.cu")
    exe = os.path.join(TMP, "own_infer")
    subprocess.run([cmake_cache("GPUTRACE_NVCC"), "-g", "-cudart", "shared", "-o", exe, src], check=True, timeout=300)
    _, trace = record([exe, "3"])
    p = run([GPUTRACE, "report", trace], base_env(), check_rc=0)
    if "no CUDA calls were recorded" in p.stdout + p.stderr:
        raise AssertionError("a shared-runtime program was reported as untraced:\n" + p.stderr)
    kernels = p.stdout[p.stdout.index("\nKernels\n") + 1:].splitlines()[2:5]
    eq(sorted(k.split("(")[0].strip() for k in kernels), ["attention", "embed", "mlp"],
       "kernels of the newcomer's own build")


if __name__ == "__main__":
    main([test_report_sample_is_what_report_prints, test_command_lines_name_real_commands_and_options,
          test_own_program_built_as_the_readme_says])
