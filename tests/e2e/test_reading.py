"""Traces read while they are written: under plain LD_PRELOAD the
collector finishes the file a moment after the program exits, holding an
exclusive lock on it until it marks it complete (trace_file.h). A command run
at once waits for it (one note on stderr) and sees every record; --no-wait
reads what is there and says it is incomplete; a file whose collector was
killed says so. A lock held by anyone but a live collector, or on a file
marked complete, is not waited for, and a wait is bounded
(GPUTRACE_READ_WAIT). Time order holds a bounded number of bytes, whatever
the chunks decompress to (a zstd bomb)."""
import fcntl
import os
import re
import shutil
import signal
import struct
import subprocess
import time
from gtest import *


def preload_run(name, args):
    """The program under plain LD_PRELOAD; returns (stdout, trace) as soon as
    the program itself has exited. Its output goes to a file, not a pipe: the
    collector it started keeps stderr open until it is done, and a pipe
    would wait for it."""
    out = os.path.join(TMP, name + ".gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out)
    with open(out + ".stdout", "w+") as f:
        rc = subprocess.call([prog(args[0])] + args[1:], env=env, stdout=f,
                             stderr=subprocess.DEVNULL, timeout=60)
        f.seek(0)
        stdout = f.read()
    eq(rc, 0, "%s exit status" % args[0])
    return stdout, out


def summary(out, *flags):
    return subprocess.run([GPUTRACE, "dump", "--summary"] + list(flags) + [out],
                          capture_output=True, text=True, timeout=60)


def counts(text):
    return {l.split()[0]: int(l.split()[1]) for l in text.splitlines()
            if l.startswith("  ") and len(l.split()) == 2}


def test_dump_right_after_the_program_waits_for_the_collector():
    stdout, out = preload_run("wait", ["basic"])
    eq(stdout, "basic: 0 failures\n", "program output")
    d = summary(out)  # the collector lingers about a second after the program
    eq(d.returncode, 0, "dump status (stderr %r)" % d.stderr)
    want = {"alloc": 5, "free": 5, "memcpy": 6, "memset": 2, "launch": 15, "sync": 4}
    got = counts(d.stdout)
    eq({k: got.get(k) for k in want}, want, "every record, read at once")
    if "still being written by its collector" not in d.stderr or "waiting" not in d.stderr:
        raise AssertionError("no waiting note: %r" % d.stderr)


def test_no_wait_reads_what_is_there():
    _, out = preload_run("nowait", ["basic"])
    d = summary(out, "--no-wait")
    eq(d.returncode, 3, "an incomplete trace is a damaged one (status 3)")
    if "incomplete: still being written" not in d.stderr:
        raise AssertionError("no incomplete warning: %r" % d.stderr)
    time.sleep(0.1)
    d = summary(out)  # and the finished file is whole
    eq(d.returncode, 0, "finished trace")
    eq(counts(d.stdout).get("launch"), 15, "launches once finished")


def test_a_killed_collector_leaves_an_unfinished_trace():
    out = os.path.join(TMP, "killed_collector.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out)
    p = subprocess.Popen([prog("steady"), "300"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    pid = None
    for _ in range(100):
        pid = collector_pid(out)
        if pid:
            break
        time.sleep(0.02)
    if not pid:
        raise AssertionError("no collector for %s" % out)
    time.sleep(0.3)  # some chunks written
    os.kill(pid, signal.SIGKILL)
    p.communicate(timeout=60)
    d = summary(out)
    eq(d.returncode, 3, "status of an unfinished trace")
    if "stopped without finishing" not in d.stderr:
        raise AssertionError("no warning: %r" % d.stderr)


def locked_copy(src, name, complete, collector):
    """A copy of trace `src` with the header's completion mark set or not
    and the collector pid it names, locked (flock -x) by this process as
    another user's reader would; returns (path, the open locked file)."""
    out = os.path.join(TMP, name + ".gtrace")
    shutil.copyfile(src, out)
    with open(out, "r+b") as f:
        head = bytearray(f.read(64))
        flags = struct.unpack_from("<I", head, 20)[0]
        struct.pack_into("<I", head, 20, flags | 1 if complete else flags & ~1)
        struct.pack_into("<I", head, 40, collector)
        f.seek(0)
        f.write(head)
    f = open(out, "rb")
    fcntl.flock(f, fcntl.LOCK_EX)
    return out, f


def finished_trace():
    _, out = record([prog("basic")])
    return out


def test_a_reader_lock_on_a_finished_trace_is_not_waited_for():
    out, lock = locked_copy(finished_trace(), "reader_lock", True, os.getpid())
    t = time.time()
    d = summary(out)
    lock.close()
    eq(d.returncode, 0, "status (stderr %r)" % d.stderr)
    eq(d.stderr, "", "no waiting, no warning")
    eq(time.time() - t < 10, True, "read at once")


def test_a_lock_whose_collector_is_gone_is_not_waited_for():
    # the pid the header names is this python, no gputrace-collector
    out, lock = locked_copy(finished_trace(), "stale_lock", False, os.getpid())
    t = time.time()
    d = summary(out)
    lock.close()
    eq(d.returncode, 3, "an unfinished trace is a damaged one (status 3)")
    if "waiting" in d.stderr or "stopped without finishing" not in d.stderr:
        raise AssertionError("stderr: %r" % d.stderr)
    eq(counts(d.stdout).get("launch"), 15, "every launch read")
    eq(time.time() - t < 10, True, "read at once")


def test_a_wait_is_bounded():
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=os.path.join(TMP, "long.gtrace"))
    p = subprocess.Popen([prog("steady"), "3000"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    out = os.path.join(TMP, "long.gtrace")
    try:
        cpid = None
        for _ in range(500):  # its collector, and the file it holds
            cpid = collector_pid(out)
            if cpid and os.path.exists(out):
                break
            time.sleep(0.02)
        t = time.time()
        d = subprocess.run([GPUTRACE, "dump", "--summary", out], capture_output=True,
                           text=True, timeout=60, env=base_env(GPUTRACE_READ_WAIT="1s"))
        took = time.time() - t
    finally:
        p.kill()
        p.communicate(timeout=60)
    eq(d.returncode, 3, "read as it is after the wait (status 3)")
    if ("waiting for it to finish" not in d.stderr or
            "incomplete: still being written by its collector (pid %d) after 1 s of "
            "waiting; read as it was" % cpid not in d.stderr):
        raise AssertionError("stderr: %r" % d.stderr)
    eq(0.9 < took < 10, True, "waited about 1 s (%.2f s)" % took)


CHUNK_MAX = 64 << 20  # GT_CHUNK_MAX_BYTES
WINDOW = 16 << 20     # GT_SESSION_WINDOW_BYTES


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def zstd_bomb(path, chunks):
    """A trace of `chunks` chunks of a few KB, each decompressing to the
    reader's largest chunk: one alloc record of its own thread (times going
    back: each comes before the chunk before it), then zeros."""
    slots = CHUNK_MAX // 96
    one = os.path.join(TMP, "one.gtrace")
    subprocess.run([os.path.join(BIN, "chrome_synth_trace"), one], check=True, text=True,
                   input="alloc ts=1000 pid=100 tid=7 ptr=0x1000 bytes=4096\n")
    with open(one, "rb") as f:
        head = f.read(64)
        n = struct.unpack_from("<I", f.read(32), 24)[0]
        rec = bytearray(subprocess.run(["zstd", "-d", "-c"], input=f.read(n),
                                       capture_output=True, check=True).stdout[:96])
    with open(path, "wb") as f:
        f.write(head)
        for i in range(chunks):
            struct.pack_into("<QII", rec, 0, 10**9 - i * 1000, 100, 1000 + i)
            data = bytes(rec) + bytes(slots * 96 - 96)
            frame = subprocess.run(["zstd", "-1", "-c"], input=data, capture_output=True,
                                   check=True).stdout
            h = struct.pack("<IIQIII", 0x4b434847, 32, i, 1, slots, len(frame))
            f.write(h + struct.pack("<I", fnv1a(h)) + frame)


def test_time_order_holds_bounded_bytes_of_a_zstd_bomb():
    bomb = os.path.join(TMP, "bomb.gtrace")
    chunks = 24
    zstd_bomb(bomb, chunks)
    eq(os.path.getsize(bomb) < 1 << 20, True, "a small file")
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    for args in (["dump", "--time-order"], ["leaks"],
                 ["chrome", "--force", "-o", os.path.join(TMP, "bomb.json")]):
        cmd = pin + [GPUTRACE] + args + [bomb]
        with open(os.path.join(TMP, "bomb.err"), "w+") as e:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=e)
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            e.seek(0)
            err = e.read()
        rss = usage.ru_maxrss * 1024
        eq(p.returncode, 3, "%s: damaged chunks (status 3; stderr %r)" % (args[0], err))
        eq(err.count("invalid record at chunk offset 96"), chunks, "%s: each chunk" % args[0])
        late = re.search(r"note: .*: (\d+) records? came after the time-order window "
                         r"\(16 chunks, 16 MiB\) had passed later ones on: read out of "
                         r"order\n", err)
        if not late or int(late.group(1)) < chunks // 2:
            raise AssertionError("%s: no out-of-order note: %r" % (args[0], err[-500:]))
        # the window, the chunk read past it and one being decompressed
        bound = WINDOW + 2 * CHUNK_MAX + (64 << 20)
        print("%s: peak RSS %d MiB" % (args[0], rss >> 20))
        if cmake_cache("GPUTRACE_SANITIZE"):  # ASan keeps freed chunks in quarantine: not our memory
            print("SKIP the RSS bound: a sanitizer build")
            continue
        eq(rss < bound, True, "%s: peak RSS %d MiB < %d MiB" % (args[0], rss >> 20,
                                                               bound >> 20))


main([test_dump_right_after_the_program_waits_for_the_collector,
      test_no_wait_reads_what_is_there, test_a_killed_collector_leaves_an_unfinished_trace,
      test_a_reader_lock_on_a_finished_trace_is_not_waited_for,
      test_a_lock_whose_collector_is_gone_is_not_waited_for, test_a_wait_is_bounded,
      test_time_order_holds_bounded_bytes_of_a_zstd_bomb])
