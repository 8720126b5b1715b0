"""The CLI's contract: exit statuses, clear errors, nothing run when the
output cannot be written, damaged traces read as far as they go; every
command's --help lists what its parser takes, an unknown option shows the
usage (status 2), options that cannot go together are refused; the
top-level help, the man page and the bash completion list every command and
exactly the options its parser takes; every JSON output carries
schema_version."""
import json
import os
import re
import shlex
import subprocess
from gtest import *


def cli(args, **env):
    return run([GPUTRACE] + args, base_env(**env))


def test_exit_status_passes_through():
    p = cli(["record", "-q", "-o", os.path.join(TMP, "x.gtrace"), "--", "sh", "-c", "exit 7"])
    eq(p.returncode, 7, "exit status")
    p = cli(["record", "-q", "-o", os.path.join(TMP, "y.gtrace"), "--", "sh", "-c", "kill -TERM $$"])
    eq(p.returncode, 128 + 15, "status of a command killed by SIGTERM")


def test_usage_errors():
    p = cli(["record", "--bogus", "--", "true"])
    eq(p.returncode, 2, "unknown option status")
    if "unexpected argument '--bogus'" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    p = cli(["record", "-o", os.path.join(TMP, "z.gtrace")])
    eq(p.returncode, 2, "missing command status")
    if "missing argument" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    p = cli(["frobnicate"])
    eq(p.returncode, 2, "unknown command status")
    eq(p.stderr, "gputrace: unknown command 'frobnicate'\n" + SHORT_USAGE,
       "unknown command message")
    p = cli(["dump"])
    eq(p.returncode, 2, "dump without file")


def test_unwritable_output_runs_nothing():
    marker = os.path.join(TMP, "ran")
    p = cli(["record", "-o", "/nonexistent-dir/out.gtrace", "--", "touch", marker])
    eq(p.returncode, 2, "status")
    if "cannot write /nonexistent-dir/out.gtrace" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    eq(os.path.exists(marker), False, "command was not run")


def test_missing_command():
    p = cli(["record", "-q", "-o", os.path.join(TMP, "m.gtrace"), "--", "/no/such/program"])
    eq(p.returncode, 127, "status")
    if "cannot run '/no/such/program'" not in p.stderr:
        raise AssertionError("message: " + p.stderr)


def test_stdout_untouched():
    p = cli(["record", "-o", os.path.join(TMP, "s.gtrace"), "--", "echo", "hello"])
    eq(p.stdout, "hello\n", "the command's stdout holds only its own output")


def test_dump_bad_files():
    empty = os.path.join(TMP, "empty.gtrace")
    open(empty, "w").close()
    p = cli(["dump", empty])
    eq(p.returncode, 2, "empty file status")
    eq(p.stderr.strip(), "gputrace dump: %s: not a gputrace trace (empty file)" % empty, "message")
    junk = os.path.join(TMP, "junk.gtrace")
    with open(junk, "wb") as f:
        f.write(os.urandom(5000))
    p = cli(["dump", junk])
    eq(p.returncode, 2, "random file status")
    if "not a gputrace trace" not in p.stderr:
        raise AssertionError("message: " + p.stderr)


def test_truncated_trace_reads_partially():
    _, out = record([prog("threads"), "20000"])
    full = dump(out)
    data = open(out, "rb").read()
    cut = os.path.join(TMP, "cut.gtrace")
    with open(cut, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    p = run([GPUTRACE, "dump", "--json", cut], base_env())
    eq(p.returncode, 3, "damaged trace status")
    if "truncated" not in p.stderr:
        raise AssertionError("no truncation warning: " + p.stderr)
    partial = [l for l in p.stdout.splitlines()]
    if not (0 < len(partial) < len(full)):
        raise AssertionError("partial read: %d of %d" % (len(partial), len(full)))


SHORT_USAGE = ("usage: gputrace COMMAND [ARGS...]\n"
               "commands: record dump leaks flame chrome report diff pprof top html export collect snapshot start stop\n"
               "`gputrace --help` says what each does and lists its options.\n")


def commands():
    """The commands as gputrace lists them (its dispatch table), pinned here."""
    p = cli([])
    eq((p.returncode, p.stdout, p.stderr), (2, "", SHORT_USAGE), "gputrace alone")
    return SHORT_USAGE.splitlines()[1].split()[1:]


# Every program and command, as invoked (the prog its messages begin with).
COMMANDS = commands()
PROGRAMS = [[GPUTRACE, c] for c in COMMANDS] + [[os.path.join(BIN, "gputrace-collector")]]
# A value the parser takes for each value name the help shows.
SAMPLE_VALUES = {"FILE": "x.gtrace", "OUT": "x.json", "OUT.pb.gz": "x.pb.gz", "P": "1",
                 "T": "1.5s", "N": "64", "SIZE": "1GiB", "DURATION": "5m", "SIZE|DURATION": "10s", "PCT": "5",
                 "ADDR:PORT": "127.0.0.1:9400", "PATH": "x.sock",
                 "cudaProfilerApi|nvtx:NAME": "cudaProfilerApi", "DIR": TMP,
                 "WHEN": "auto", "FMT": "csv", "alloc|all|none|alloc+free": "all", "local|any": "local"}
HELP_LINE = re.compile(r"^  (?:-(\w), |    )--([\w-]+)(?: (\S+))?(?:\s|$)")


def prog_name(argv):
    return " ".join([os.path.basename(argv[0])] + argv[1:])


def listed_options(argv):
    """--help: status 0, stdout only, the usage first; its option lines as
    (short, long, value name) and the usage's lines."""
    p = run(argv + ["--help"], base_env(), check_rc=0)
    eq(p.stderr, "", "stderr of %s --help" % prog_name(argv))
    if not p.stdout.startswith("usage: %s " % prog_name(argv)):
        raise AssertionError("%s --help:\n%s" % (prog_name(argv), p.stdout))
    for line in p.stdout.splitlines():
        if len(line) > 80:
            raise AssertionError("%s --help: a line over 80 columns: %r" % (prog_name(argv), line))
    lines = p.stdout.splitlines()
    wrapped = 1
    while wrapped < len(lines) and lines[wrapped].startswith(" "):
        wrapped += 1
    usage = "\n".join(lines[:wrapped])  # the usage line, wrapped
    opts = [HELP_LINE.match(l).groups() for l in lines if HELP_LINE.match(l)]
    return opts, usage


def test_help_lists_what_the_parser_takes():
    """Each option --help lists is in the usage and taken by the parser: given
    alone (with a value of its kind), parsing gets past it to the missing
    argument or option (status 2), and nothing runs."""
    for argv in PROGRAMS:
        opts, usage = listed_options(argv)
        names = [o[1] for o in opts]
        reads_a_trace = len(argv) == 2 and argv[1] not in ("record", "top", "collect", "snapshot", "start", "stop")
        eq("help" in names, True, "%s --help lists --help" % prog_name(argv))
        eq("no-wait" in names, reads_a_trace, "%s --help lists --no-wait" % prog_name(argv))
        for short, name, value in opts:
            if name in ("help", "version"):
                continue
            if ("-" + short if short else "--" + name) not in usage:
                raise AssertionError("%s: %s not in the usage:\n%s" % (prog_name(argv), name, usage))
            given = ["--" + name] + ([SAMPLE_VALUES[value]] if value else [])
            for form in ([given] + ([["-" + short] + given[1:]] if short else []) +
                         ([["--%s=%s" % (name, given[1])]] if value else [])):
                p = run(argv + form, base_env(), timeout=20)
                first = p.stderr.splitlines()[0] if p.stderr else ""
                if p.returncode != 2 or not (
                        first == "%s: missing argument" % prog_name(argv) or
                        first.startswith("%s: missing option --" % prog_name(argv))):
                    raise AssertionError("%s %s: status %d, stderr:\n%s" %
                                         (prog_name(argv), " ".join(form), p.returncode, p.stderr))


def test_unknown_option_shows_the_usage():
    for argv in PROGRAMS:
        _, usage = listed_options(argv)
        p = run(argv + ["--no-such-option", "x.gtrace"], base_env(), timeout=20)
        eq(p.returncode, 2, "status of %s --no-such-option" % prog_name(argv))
        eq(p.stdout, "", "stdout of %s --no-such-option" % prog_name(argv))
        eq(p.stderr, "%s: unexpected argument '--no-such-option' (unknown option)\n%s\n" %
           (prog_name(argv), usage), "stderr of %s --no-such-option" % prog_name(argv))


def test_versions():
    """Both programs print CMake's project version, written once."""
    cmake = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                              "CMakeLists.txt")).read()
    version = re.search(r"project\(gputrace VERSION ([0-9.]+)", cmake).group(1)
    eq(run([GPUTRACE, "--version"], base_env(), check_rc=0).stdout, "gputrace %s\n" % version,
       "gputrace --version")
    p = run([os.path.join(BIN, "gputrace-collector"), "--version"], base_env(), check_rc=0)
    eq(p.stdout, "gputrace-collector %s\n" % version, "gputrace-collector --version")


# Pairs the parser refuses together: choices of one setting (flame's weights)
# and options a table says exclude each other.
CONFLICTS = ([("flame", a, b) for a in ("--leaked", "--allocated", "--peak", "--gpu")
              for b in ("--leaked", "--allocated", "--peak", "--gpu") if a != b] +
             [("dump", "--json", "--summary"), ("dump", "--summary", "--json"),
              ("diff", "--json", "--all"), ("diff", "--all", "--json")])


def test_conflicting_options():
    """One line naming both, in the order given, then the usage; status 2;
    nothing read (the trace does not exist). The same option twice is fine."""
    for cmd, a, b in CONFLICTS:
        argv = [GPUTRACE, cmd]
        _, usage = listed_options(argv)
        files = ["no-such-a.gtrace", "no-such-b.gtrace"][:2 if cmd == "diff" else 1]
        p = run(argv + [a] + files + [b], base_env())
        eq((p.returncode, p.stdout, p.stderr),
           (2, "", "gputrace %s: %s and %s cannot be used together\n%s\n" % (cmd, a, b, usage)),
           "gputrace %s %s %s" % (cmd, a, b))
    collector = [os.path.join(BIN, "gputrace-collector")]
    _, usage = listed_options(collector)
    p = run(collector + ["--new", "--append", "--socket", "x", "--output", "y"], base_env())
    eq((p.returncode, p.stdout, p.stderr),
       (2, "", "gputrace-collector: --new and --append cannot be used together\n%s\n" % usage),
       "gputrace-collector --new --append (its output modes)")
    p = cli(["flame", "--gpu", "--gpu", "no-such.gtrace"])
    eq(p.returncode, 2, "flame --gpu --gpu on a missing trace")
    if "cannot be used together" in p.stderr or "no-such.gtrace" not in p.stderr:
        raise AssertionError("flame --gpu --gpu: " + p.stderr)


def squeeze(text):
    return " ".join(text.split())


def test_top_level_help():
    """gputrace --help: each command's summary (its about line) and its whole
    usage, as its own --help prints them, within 80 columns."""
    p = cli(["--help"])
    eq((p.returncode, p.stderr), (0, ""), "gputrace --help")
    if not p.stdout.startswith("usage: gputrace COMMAND [ARGS...]\n\ncommands:\n"):
        raise AssertionError("gputrace --help:\n" + p.stdout)
    for line in p.stdout.splitlines():
        if len(line) > 80:
            raise AssertionError("gputrace --help: a line over 80 columns: %r" % line)
    flat = squeeze(p.stdout)
    for cmd in COMMANDS:
        own = run([GPUTRACE, cmd, "--help"], base_env(), check_rc=0).stdout.splitlines()
        about = own[[i for i, l in enumerate(own) if not l.startswith(" ")][1]]
        usage = squeeze("\n".join(l for l in own[:own.index(about)]))[len("usage: "):]
        if not re.search(r"(?m)^  %s +%s" % (re.escape(cmd), re.escape(about.split()[0])),
                         p.stdout):
            raise AssertionError("gputrace --help: no line for %s:\n%s" % (cmd, p.stdout))
        for part in (squeeze(about), usage):
            if part not in flat:
                raise AssertionError("gputrace --help lacks %r" % part)
    eq(cli(["help"]).stdout, p.stdout, "gputrace help")
    eq(cli(["-h"]).stdout, p.stdout, "gputrace -h")


MAN_PAGE = os.path.join(BUILD, "share", "man", "man1", "gputrace.1")
COMPLETION = os.path.join(BUILD, "share", "bash-completion", "completions", "gputrace")


def man_text():
    env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C")
    p = run(["man", "-l", MAN_PAGE], env, check_rc=0)
    return p.stdout.replace("\u2010", "-").replace("\u2212", "-")


def man_sections(text):
    """The rendered COMMANDS section, split at each command's subheading."""
    body = text.split("\nCOMMANDS\n", 1)[1].split("\nENVIRONMENT\n", 1)[0]
    parts = re.split(r"(?m)^   (\S+)\n", body)
    return dict(zip(parts[1::2], parts[2::2]))


def man_options(cmd):
    """The options of cmd's section in the man page's source (.TP tags)."""
    src = open(MAN_PAGE).read().split(".SS %s\n" % cmd, 1)[1].split(".SS ", 1)[0]
    src = src.split(".SH ", 1)[0]
    tags = re.findall(r"(?m)^\.TP\n(.*)$", src)
    return {m.replace("\\-", "-") for t in tags
            for m in re.findall(r"\\fB(\\-(?:\\-)?[\w\\-]+)\\fR", t)}


def complete(words, cwd=None):
    """COMPREPLY of the completion function for words (the last: the one
    being completed), in a bash subprocess."""
    script = ("source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _gputrace; "
              "printf '%%s\\n' \"${COMPREPLY[@]}\"" %
              (shlex.quote(COMPLETION), " ".join(shlex.quote(w) for w in words), len(words) - 1))
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True,
                       text=True, cwd=cwd or TMP, timeout=30)
    eq((p.returncode, p.stderr), (0, ""), "completion of %r" % words)
    return [l for l in p.stdout.splitlines() if l]


def test_one_table_everywhere():
    """For every command, the options its --help lists (each taken by the
    parser: test_help_lists_what_the_parser_takes) are exactly those of its
    man page section, rendered and in the source, and of its completion."""
    sections = man_sections(man_text())
    eq(sorted(sections), sorted(COMMANDS), "the man page's command sections")
    for cmd in COMMANDS:
        opts, _ = listed_options([GPUTRACE, cmd])
        helped = {"--" + o[1] for o in opts} | {"-" + o[0] for o in opts if o[0]}
        eq(man_options(cmd), helped, "man page options of %s" % cmd)
        rendered = set(re.findall(r"(?<![\w-])--?[\w][\w-]*", sections[cmd]))
        if not helped <= rendered:
            raise AssertionError("man -l: %s lacks %s" % (cmd, sorted(helped - rendered)))
        eq(set(complete(["gputrace", cmd, "-"])), helped, "completion of %s -" % cmd)


def test_man_page():
    """The man page renders (man -l) and groff finds nothing to warn about."""
    p = subprocess.run(["groff", "-ww", "-z", "-man", MAN_PAGE], capture_output=True,
                       text=True, timeout=30)
    eq((p.returncode, p.stderr), (0, ""), "groff -ww -z -man")
    text = man_text()
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "ENVIRONMENT", "FILES",
                    "EXIT STATUS"):
        if not re.search(r"(?m)^%s$" % heading, text):
            raise AssertionError("man -l: no %s section" % heading)
    for knob in ("GPUTRACE_RING_KB", "GPUTRACE_CAPTURE_RANGE"):
        if knob not in text:
            raise AssertionError("man -l: no %s" % knob)


def test_completion():
    p = subprocess.run(["bash", "-n", COMPLETION], capture_output=True, text=True)
    eq((p.returncode, p.stderr), (0, ""), "bash -n on the completion")
    d = os.path.join(TMP, "comp")
    os.makedirs(os.path.join(d, "sub"), exist_ok=True)
    for f in ("a.gtrace", "b.gtrace", "notes.txt"):
        open(os.path.join(d, f), "w").close()
    eq(complete(["gputrace", "fl"]), ["flame"], "gputrace fl")
    eq(sorted(complete(["gputrace", ""])), sorted(COMMANDS + ["--help", "--version"]),
       "gputrace <TAB>")
    eq(complete(["gputrace", "flame", "--g"]), ["--gpu"], "gputrace flame --g")
    report = {"--" + o[1] for o in listed_options([GPUTRACE, "report"])[0]}
    eq(set(complete(["gputrace", "report", "--"])), report, "gputrace report --")
    eq(sorted(complete(["gputrace", "report", ""], d)), ["a.gtrace", "b.gtrace", "sub"],
       "a trace: *.gtrace first")
    eq(complete(["gputrace", "dump", "n"], d), ["notes.txt"], "no trace matches: any file")
    eq(sorted(complete(["gputrace", "chrome", "-o", ""], d)),
       ["a.gtrace", "b.gtrace", "notes.txt", "sub"], "an output: any file")
    eq(complete(["gputrace", "record", "--pprof-dir", ""], d), ["sub"], "a directory")
    eq(complete(["gputrace", "report", "--pid", ""], d), [], "a number: nothing")
    if "sh" not in complete(["gputrace", "record", "--", "sh"], d):
        raise AssertionError("record -- CMD: no command names")


def test_json_schema_version():
    """Every JSON document begins with "schema_version": 1; dump --json has
    it on each line (gtest.dump checks and drops it)."""
    _, out = record([prog("leaky")])
    docs = {"report --json": cli(["report", "--json", out]).stdout,
            "leaks --json": cli(["leaks", "--json", out]).stdout,
            "diff --json": cli(["diff", "--json", out, out]).stdout}
    chrome = json.loads(cli(["chrome", "-o", "-", out]).stdout)
    docs["chrome (metadata)"] = json.dumps(chrome["metadata"])
    for what, text in docs.items():
        d = json.loads(text)
        eq(list(d)[:1], ["schema_version"], "first key of " + what)
        eq(d["schema_version"], JSON_SCHEMA_VERSION, "schema_version of " + what)
    if not dump(out):
        raise AssertionError("dump --json: no records")



def test_a_full_stdout_is_an_error():
    """Every command writing to stdout checks it at the end (notices.h,
    gt_exit_status): a full disk is status 2 with one line saying so, never
    a silent 0 with the output lost."""
    _, leaky = record([prog("leaky")], out=os.path.join(TMP, "full_stdout_leaky.gtrace"))
    _, basic = record([prog("basic")], out=os.path.join(TMP, "full_stdout_basic.gtrace"))
    for out, args in ((leaky, ["dump"]), (leaky, ["dump", "--json"]), (leaky, ["report"]),
                      (leaky, ["report", "--json"]), (leaky, ["leaks"]), (leaky, ["flame"]),
                      (basic, ["flame", "--gpu"]), (leaky, ["diff", basic])):
        cmd = [GPUTRACE, args[0], out] + args[1:]
        with open("/dev/full", "w") as full:
            p = subprocess.run(cmd, env=base_env(), stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=60)
        want = "gputrace %s: writing output: No space left on device" % args[0]
        eq((p.returncode, p.stderr.strip().splitlines()[-1:]), (2, [want]), " ".join(args))

main([test_exit_status_passes_through, test_usage_errors, test_unwritable_output_runs_nothing,
      test_missing_command, test_stdout_untouched, test_dump_bad_files,
      test_truncated_trace_reads_partially, test_help_lists_what_the_parser_takes,
      test_unknown_option_shows_the_usage, test_versions, test_conflicting_options,
      test_top_level_help, test_one_table_everywhere, test_man_page, test_completion,
      test_json_schema_version, test_a_full_stdout_is_an_error])
