/* check.h — minimal assertions for the unit tests: a failed CHECK prints the
 * expression with file:line and the test exits 1 at the end. */
#ifndef GPUTRACE_TEST_CHECK_H
#define GPUTRACE_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    check_count++;                                                                       \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);           \
      check_failures++;                                                                  \
    }                                                                                    \
  } while (0)

/* CHECK with a message: printf's format and arguments after the condition. */
#define CHECK_MSG(cond, ...)                                                             \
  do {                                                                                   \
    check_count++;                                                                       \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
      fprintf(stderr, __VA_ARGS__);                                                      \
      fputc('\n', stderr);                                                               \
      check_failures++;                                                                  \
    }                                                                                    \
  } while (0)

#define CHECK_EQ_U64(a, b)                                                               \
  do {                                                                                   \
    uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);                                   \
    check_count++;                                                                       \
    if (va_ != vb_) {                                                                    \
      fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", __FILE__,  \
              __LINE__, #a, #b, va_, vb_);                                               \
      check_failures++;                                                                  \
    }                                                                                    \
  } while (0)

static inline int check_finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures ? 1 : 0;
}

#endif
