/* test_util.c — the CLI's helpers: JSON strings from untrusted text (only
 * well-formed UTF-8 passes), option values, the hash map (growth,
 * deletion, key 0). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

static void json_of(const char *in, char *out, size_t len) {
  FILE *f = fmemopen(out, len, "w");
  gt_json_str(f, in);
  fclose(f);
}

int main(void) {
  char buf[256];
  json_of("a\"b\\c\n\x01", buf, sizeof buf);
  CHECK(strcmp(buf, "\"a\\\"b\\\\c\\u000a\\u0001\"") == 0);
  json_of("\xe2\x82\xac \xf0\x9f\x9a\x80", buf, sizeof buf); /* euro, rocket */
  CHECK(strcmp(buf, "\"\xe2\x82\xac \xf0\x9f\x9a\x80\"") == 0);
  json_of("\xc0\x95", buf, sizeof buf); /* overlong */
  CHECK(strcmp(buf, "\"\\ufffd\\ufffd\"") == 0);
  json_of("\xed\xa0\x80", buf, sizeof buf); /* a surrogate */
  CHECK(strcmp(buf, "\"\\ufffd\\ufffd\\ufffd\"") == 0);
  json_of("\xf4\x90\x80\x80", buf, sizeof buf); /* past U+10FFFF */
  CHECK(strcmp(buf, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"") == 0);
  json_of("\xe2\x82", buf, sizeof buf); /* cut short */
  CHECK(strcmp(buf, "\"\\ufffd\\ufffd\"") == 0);

  uint64_t v;
  CHECK(gt_parse_duration("1.5", &v) == 0 && v == 1500000000ull);
  CHECK(gt_parse_duration("250ms", &v) == 0 && v == 250000000ull);
  CHECK(gt_parse_duration("10us", &v) == 0 && v == 10000ull);
  CHECK(gt_parse_duration("800ns", &v) == 0 && v == 800ull);
  CHECK(gt_parse_duration("5m", &v) == 0 && v == 300000000000ull);
  CHECK(gt_parse_duration("1.5min", &v) == 0 && v == 90000000000ull);
  CHECK(gt_parse_duration("2h", &v) == 0 && v == 7200000000000ull);
  CHECK(gt_parse_duration("-1", &v) == -1);
  CHECK(gt_parse_duration("5 parsecs", &v) == -1);
  CHECK(gt_parse_duration("", &v) == -1);
  CHECK(gt_parse_size("80GiB", &v) == 0 && v == 80ull << 30);
  CHECK(gt_parse_size("16G", &v) == 0 && v == 16ull << 30);
  CHECK(gt_parse_size("1e9", &v) == 0 && v == 1000000000ull);
  CHECK(gt_parse_size("12 apples", &v) == -1);

  struct gt_map m;
  gt_map_init(&m);
  int puts_ok = 1;
  for (uint64_t k = 0; k < 100000; k++)
    puts_ok &= gt_map_put(&m, k * 7, k) == 0;
  CHECK(puts_ok);
  CHECK_EQ_U64(m.count, 100000);
  for (uint64_t k = 0; k < 100000; k += 2)
    CHECK(gt_map_del(&m, k * 7) == 1);
  int all = 1;
  for (uint64_t k = 0; k < 100000; k++) {
    uint64_t got = 0;
    int found = gt_map_get(&m, k * 7, &got);
    all &= (k % 2) ? (found && got == k) : !found;
  }
  CHECK(all);
  CHECK(gt_map_get(&m, 7, &v) && v == 1);
  CHECK(!gt_map_get(&m, 0, &v)); /* key 0 was deleted: keys may be 0 */
  CHECK(gt_map_put(&m, 0, 42) == 0 && gt_map_get(&m, 0, &v) && v == 42);
  gt_map_free(&m);
  return check_finish("test_util");
}
