/* test_util.c — the CLI's helpers: JSON strings from untrusted text (only
 * well-formed UTF-8 passes), text for terminals (cleaned, measured in
 * columns) and names shortened to a column's width, option values, the hash map (growth,
 * deletion, key 0), exact percentiles (gt_durs: quickselect, the two-pass
 * radix select, its passes split over two threads, wide values) against a
 * sort. */
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stats.h"
#include "util.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* n values from gen(i) (an LCG's draws shaped by `shape`): gt_durs's
 * percentiles equal the sorted values' nearest ranks. */
static int durs_exact(size_t n, unsigned shape) {
  static const unsigned pcts[] = {1, 50, 90, 99, 100};
  struct gt_durs d = {0};
  uint64_t *sorted = gt_xcalloc(n ? n : 1, sizeof *sorted), x = 12345, got[5];
  for (size_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = x >> 33;                   /* 31 random bits */
    uint64_t v = shape == 0   ? r % 5000    /* one 16-bit bucket */
                 : shape == 1 ? r % 3000000 /* many buckets */
                 : shape == 2 ? (i % 10 ? r % 900 : 70000 + r % 10) /* p99 alone */
                              : r << 4;                             /* wide: past 2^32 */
    sorted[i] = v;
    gt_durs_add(&d, v);
  }
  qsort(sorted, n, sizeof *sorted, cmp_u64);
  gt_durs_percentiles(&d, pcts, 5, got);
  int ok = 1;
  for (size_t j = 0; j < 5; j++)
    ok &= got[j] == (n ? sorted[gt_rank(pcts[j], n)] : 0);
  gt_durs_free(&d);
  free(sorted);
  return ok;
}

/* gt_name_fit(name, width) is exactly `want`, in at most width columns. */
static void fits(const char *name, int width, const char *want) {
  char *got = gt_name_fit(name, width);
  CHECK_MSG(strcmp(got, want) == 0 && gt_text_width(got) <= width,
            "fit(%s, %d): got \"%s\", want \"%s\"", name, width, got, want);
  free(got);
}

static void name_fitting(void) {
  static const char *vec =
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::AbsFunctor<float>, at::detail::Array<char*, 2> >"
      "(int, at::native::AbsFunctor<float>, at::detail::Array<char*, 2>)";
  fits(vec, 1000, vec); /* fits: whole */
  /* the innermost lists first, in the name and in its parameters */
  fits(vec, 153,
       "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<…>, "
       "at::detail::Array<…> >(int, at::native::AbsFunctor<…>, at::detail::Array<…>)");
  /* then the parameters: the kernel's own template arguments, which tell
   * two instances apart, go last */
  fits(vec, 152,
       "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<…>, "
       "at::detail::Array<…> >(…)");
  fits(vec, 102,
       "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<…>, "
       "at::detail::Array<…> >(…)");
  /* one column short: the outer list too */
  fits(vec, 101, "void at::native::vectorized_elementwise_kernel<…>(…)");
  fits(vec, 52, "void at::native::vectorized_elementwise_kernel<…>(…)");
  /* two instances of one template stay apart as long as their arguments fit */
  fits("void gemm_tiled<float, 16>(float*, int)", 30, "void gemm_tiled<float, 16>(…)");
  fits("void gemm_tiled<int, 8>(int*, int)", 30, "void gemm_tiled<int, 8>(…)");
  /* then the start, from a scope */
  fits(vec, 44, "…::vectorized_elementwise_kernel<…>(…)");
  fits(vec, 20, "…ntwise_kernel<…>(…)");
  fits(vec, 1, "…");
  fits(vec, 0, "");
  /* nested: the deepest list of more than one column, the longest first */
  fits("a<b<c<d>>, e<f<gh>>>(x<y>)", 25, "a<b<c<d>>, e<f<…>>>(x<y>)");
  fits("a<b<c<d>>, e<f<gh>>>(x<y>)", 22, "a<b<…>, e<f<…>>>(x<y>)");
  fits("a<b<c<d>>, e<f<gh>>>(x<y>)", 19, "a<b<…>, e<…>>(x<y>)");
  fits("a<b<c<d>>, e<f<gh>>>(x<y>)", 18, "a<b<…>, e<…>>(…)");
  fits("a<b<c<d>>, e<f<gh>>>(x<y>)", 13, "a<…>(…)");
  fits("a<b<c<d>>, e<f<gh>>>(x<y>)", 8, "a<…>(…)");
  /* operators' '<' and '(' are no brackets */
  static const char *lt = "bool operator< <int>(Box<int> const&, Box<int> const&)";
  fits(lt, 50, "bool operator< <int>(Box<…> const&, Box<…> const&)");
  fits(lt, 48, "bool operator< <int>(…)");
  fits(lt, 21, "bool operator< <…>(…)");
  fits("std::ostream& operator<< <char>(std::ostream&, Box<int> const&)", 40,
       "std::ostream& operator<< <char>(…)");
  fits("Cmp<int>::operator()(int, int) const", 30, "Cmp<int>::operator()(…) const");
  fits("Cmp<int>::operator()(int, int) const", 26, "…::operator()(…) const");
  /* a lambda: its braces and parentheses are brackets too */
  static const char *lam = "void at::native::elementwise_kernel<128, 2, "
                           "at::native::gpu_kernel_impl<Abs>(at::TensorIteratorBase&)"
                           "::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<Abs>"
                           "(at::TensorIteratorBase&)::{lambda(int)#1})";
  fits(lam, 60, "void at::native::elementwise_kernel<…>(…)");
  /* no templates: the parameters, then the start */
  fits("attention(float*, float const*, int)", 36,
       "attention(float*, float const*, int)");
  fits("attention(float*, float const*, int)", 35, "attention(…)");
  fits("a_function_name_without_any_templates(int)", 30,
       "…name_without_any_templates(…)");
  fits("memcpy HtoD", 5, "…HtoD");
  /* unbalanced: only cut */
  fits("broken<int(x)", 8, "…<int(x)");
  /* columns, not bytes: each of é ü … is one */
  fits("héllo_wörld_ünïcode(int)", 22, "héllo_wörld_ünïcode(…)");
  fits("héllo_wörld_ünïcode(int)", 17, "…wörld_ünïcode(…)");
  CHECK(gt_text_width("é…x") == 3 && gt_text_width("") == 0);
  /* display columns, as a terminal lays them out (glibc's wcwidth): CJK and
   * fullwidth characters are two, a combining mark none */
  CHECK(gt_text_width("漢字") == 4 && gt_text_width("ｆｕｌｌ") == 8);
  CHECK(gt_text_width("e\xcc\x81") == 1 && gt_text_width("カーネル_k") == 10);
  CHECK(gt_text_cut("漢字x", 3) == 3 && gt_text_cut("漢字x", 4) == 6 &&
        gt_text_cut("漢字x", 9) == 7 && gt_text_cut("ab", 0) == 0);
  fits("ns::漢漢漢漢漢漢漢漢漢漢(int)", 16, "…漢漢漢漢漢漢(…)");
  fits("void k<全角ｆｕｌｌ>(int)", 12, "void k<…>(…)");
  char c[32];
  CHECK(strcmp(gt_text_clean(c, sizeof c, "a\tb\xff\xc3\xa9;\x1b[2J"), "a?b?é;?[2J") ==
        0);
  CHECK(strcmp(gt_text_clean(c, 4, "abcdef"), "abc") == 0);
  CHECK(strcmp(gt_text_clean(c, 3, "aé"), "a") == 0); /* not half a character */
  /* gt_text_utf8: valid text (controls, quotes, newlines too) as it is, the
   * same pointer; each invalid byte as U+FFFD */
  char *ub = NULL;
  size_t ucap = 0;
  const char *ok = "a,\"b\"\n\tc é";
  CHECK(gt_text_utf8(ok, &ub, &ucap) == ok && ub == NULL);
  CHECK(strcmp(gt_text_utf8("x\xffy\xc0\x95", &ub, &ucap),
               "x\xef\xbf\xbdy\xef\xbf\xbd\xef\xbf\xbd") == 0);
  free(ub);
}

static void escape_of(const char *in, int quote, char *out, size_t len) {
  FILE *f = fmemopen(out, len, "w");
  gt_text_escape(f, in, quote);
  fclose(f);
}

/* The one UTF-8 check (RFC 3629) and dump's escaping of traced text. */
static void test_utf8_and_escape(void) {
  const unsigned char *u = (const unsigned char *)"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x9a\x80";
  CHECK(gt_utf8_len(u) == 1 && gt_utf8_len(u + 1) == 2 && gt_utf8_len(u + 3) == 3 &&
        gt_utf8_len(u + 6) == 4);
  CHECK(gt_utf8_len((const unsigned char *)"\xc0\x80") == 0);         /* overlong */
  CHECK(gt_utf8_len((const unsigned char *)"\xe0\x80\x80") == 0);     /* overlong */
  CHECK(gt_utf8_len((const unsigned char *)"\xed\xa0\x80") == 0);     /* surrogate */
  CHECK(gt_utf8_len((const unsigned char *)"\xf4\x90\x80\x80") == 0); /* > U+10FFFF */
  CHECK(gt_utf8_len((const unsigned char *)"\x80") == 0);             /* continuation */
  CHECK(gt_utf8_len((const unsigned char *)"\xe2\x82") == 0);         /* cut short */
  char buf[128];
  escape_of("a\nFORGED\r\t\x1b[2J\x7f\\\"\xc0\x80\xc2\x9b\xc3\xa9", 0, buf, sizeof buf);
  CHECK(strcmp(buf, "a\\nFORGED\\r\\t\\x1b[2J\\x7f\\\\\"\\xc0\\x80\\u009b\xc3\xa9") == 0);
  escape_of("say \"hi\"", 1, buf, sizeof buf);
  CHECK(strcmp(buf, "say \\\"hi\\\"") == 0);
  char c[16];
  CHECK(strcmp(gt_text_clean(c, sizeof c,
                             "a\xc2\x9b"
                             "2J"),
               "a?2J") == 0); /* C1 CSI */
}

static void json_of(const char *in, char *out, size_t len) {
  FILE *f = fmemopen(out, len, "w");
  gt_json_str(f, in);
  fclose(f);
}

/* Sanitizer builds: an allocation too large fails (NULL) as it does in a
 * plain build, instead of ending the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1";
}
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) {
  return "allocator_may_return_null=1";
}

static sigjmp_buf oom_back;
static int oom_calls;

static void oom_catch(void) {
  oom_calls++;
  siglongjmp(oom_back, 1);
}

/* Out of memory goes to the handler the front end set (the library never
 * exits on its own): each growable-array helper calls it when the
 * allocation fails. */
static void oom_goes_to_the_handler(void) {
  gt_set_oom_handler(oom_catch);
  size_t cap = 0;
  volatile int reached = 0;
  if (!sigsetjmp(oom_back, 0)) {
    gt_xcalloc(SIZE_MAX / 64, 32);
    reached |= 1;
  }
  if (!sigsetjmp(oom_back, 0)) {
    gt_xrealloc(NULL, SIZE_MAX / 2);
    reached |= 2;
  }
  if (!sigsetjmp(oom_back, 0)) {
    gt_grow(NULL, &cap, SIZE_MAX / 64, 16);
    reached |= 4;
  }
  CHECK_MSG(oom_calls == 3 && reached == 0, "handler calls %d, returned from %d",
            oom_calls, reached);
  gt_set_oom_handler(NULL);
}

int main(void) {
  test_utf8_and_escape();
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
  CHECK(durs_exact(0, 0));
  CHECK(durs_exact(7, 1));      /* quickselect */
  CHECK(durs_exact(4095, 1));   /* quickselect, the largest */
  CHECK(durs_exact(100000, 0)); /* radix: every rank in one bucket */
  CHECK(durs_exact(100000, 1)); /* radix: ranks in different buckets */
  CHECK(durs_exact(100000, 2)); /* radix: two ranks share a bucket, one not */
  CHECK(durs_exact(100000, 3)); /* wide values: quickselect on 64 bits */
  /* Past RADIX_SPLIT_MIN (2^20) values, each pass counts its halves on two
   * threads; an odd count leaves the second half one longer. */
  CHECK(durs_exact(1500001, 1));
  CHECK(durs_exact(1500001, 2));
  name_fitting();
  oom_goes_to_the_handler();
  return check_finish("test_util");
}
