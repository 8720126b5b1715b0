/* fake_zstd.c — a "different libzstd" (soname libzstd.so.1) that a traced
 * program loads before gputrace's collector could: ZSTD_versionNumber says
 * 99999 and it has nothing else, so a collector that bound to it could not
 * write a trace (tests/bundle/test_bundle.py, the clash test). */
__attribute__((visibility("default"))) unsigned ZSTD_versionNumber(void) {
  return 99999;
}
