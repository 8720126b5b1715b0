// stopped_run.h — the handshake of the programs that tests/e2e/
// test_late_name.py runs with the collector stopped: say "ready" once
// connected, run the threads only after a line on stdin, say "done", and
// stay alive until stdin closes (the test resumes the collector first).
#pragma once
#include <cstdio>

// After a first traced call: "ready", then wait for the go line (0 at EOF).
static inline int ready_then_wait_go() {
  printf("ready\n");
  fflush(stdout);
  char line[16];
  return fgets(line, sizeof line, stdin) != nullptr;
}

// "done", then wait for stdin to close.
static inline void done_then_wait_close() {
  printf("done\n");
  fflush(stdout);
  char line[16];
  while (fgets(line, sizeof line, stdin))
    ;
}
