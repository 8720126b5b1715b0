/* fake_unwind.c — a "different libunwind" (soname libunwind.so.8) loaded by
 * the traced program: unw_backtrace returns -4242, so the program can tell
 * its own copy from any other (tests/bundle/test_bundle.py). */
__attribute__((visibility("default"))) int unw_backtrace(void **buffer, int size) {
  (void)buffer;
  (void)size;
  return -4242;
}
