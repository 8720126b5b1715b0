/* options_vtype.c — compiled, never run, by the ctest options_vtype
 * (tests/CMakeLists.txt): an option table whose value pointers match
 * their options' types compiles; with -DGT_PLANT_WRONG_VTYPE an int
 * given to a size option must not (options.h, GT_OPT_VALUE_PTR). */
#include <stdint.h>

#include "gputrace/options.h"

int vtype_table_size(void);

int vtype_table_size(void) {
  int flag = 0, count = 0;
  uint32_t pid = 0;
  uint64_t bytes = 0, ns = 0;
  const char *path = NULL;
#ifdef GT_PLANT_WRONG_VTYPE
  int wrong = 0;
#define BYTES_OPT GT_OPT_SIZE(0, "max-size", &wrong, "SIZE", "planted: an int for a size")
#else
#define BYTES_OPT GT_OPT_SIZE(0, "max-size", &bytes, "SIZE", "a size")
#endif
  const struct gt_option options[] = {
      GT_OPT_FLAG(0, "json", &flag, "a flag"),
      GT_OPT_INT(0, "count", &count, "N", "an int"),
      GT_OPT_UINT32(0, "pid", &pid, "PID", "a pid"),
      GT_OPT_DURATION(0, "from", &ns, "T", "a duration"),
      GT_OPT_STRING('o', "output", &path, "FILE", "a string"),
      GT_OPT_FLAG(0, "checked", NULL, "checked, not kept"),
      BYTES_OPT,
      GT_OPT_END,
  };
  return (int)(sizeof options / sizeof options[0]);
}
