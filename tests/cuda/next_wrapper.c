/* next_wrapper.c — another interposer, preloaded after libgputrace.so, that
 * wraps puts() and finds the real one with dlsym(RTLD_NEXT): the shim's own
 * dlsym must keep RTLD_NEXT relative to this library, or this finds itself
 * and recurses until the stack overflows. */
#include <dlfcn.h>
#include <stdio.h>

int puts(const char *s) {
  static int (*real_puts)(const char *);
  if (!real_puts)
    real_puts = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
  if (!real_puts || real_puts == puts)
    return -1;
  fputs("[wrapped] ", stdout);
  return real_puts(s);
}
