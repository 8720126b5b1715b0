"""hold_many.py PROG N [LATE [N2]] — run under `gputrace record` by
e2e/test_fd_limits.py. N copies of PROG (tests/cuda/hold_open.c) at once,
sharing one stdin pipe and one stdout pipe, so that all N stay connected to
the collector together. Once every copy has written its byte (traced, or
told why not), prints "held PID ..." and waits for a line on its own stdin.
With LATE, then starts one more copy on the same pipes, prints "late PID"
and waits for another line. Then ends them all (EOF on their stdin), waits
for them and prints "ended STATUS ..." (the N, then the late one). With N2,
after another line, N2 more copies run at once, their stdin at EOF, and
"then PID ..." names them. Exits 1 if a copy failed."""
import os
import subprocess
import sys


def main():
    prog, n = sys.argv[1], int(sys.argv[2])
    late = len(sys.argv) > 3 and sys.argv[3] == "1"
    n2 = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    hold_r, hold_w = os.pipe()
    ready_r, ready_w = os.pipe()
    procs = [subprocess.Popen([prog], stdin=hold_r, stdout=ready_w) for _ in range(n)]
    for _ in range(n):  # a byte from each
        if not os.read(ready_r, 1):
            break
    print("held %s" % " ".join(str(p.pid) for p in procs), flush=True)
    sys.stdin.readline()
    if late:
        procs.append(subprocess.Popen([prog], stdin=hold_r, stdout=ready_w))
        print("late %d" % procs[-1].pid, flush=True)
        sys.stdin.readline()
    os.close(hold_r)
    os.close(ready_w)
    os.close(hold_w)
    statuses = [p.wait() for p in procs]
    print("ended %s" % " ".join(str(s) for s in statuses), flush=True)
    failed = any(statuses)
    if n2:
        sys.stdin.readline()
        more = [subprocess.Popen([prog], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                for _ in range(n2)]
        failed |= any(p.wait() for p in more)
        print("then %s" % " ".join(str(p.pid) for p in more), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
