/* units.c — see include/gputrace/units.h. */
#include "gputrace/units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A number with a unit suffix, scaled; -1 on error. */
static int scaled(const char *s, const char *const *units, const double *scale, size_t n,
                  double dflt, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !(v >= 0 && v < 1e300)) /* also NaN, inf */
    return -1;
  if (*end == '\0') {
    *out = v * dflt;
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    if (!strcmp(end, units[i])) {
      *out = v * scale[i];
      return 0;
    }
  return -1;
}

int gt_parse_duration(const char *s, uint64_t *ns) {
  static const char *const units[] = {"s", "ms", "us", "µs", "ns", "m", "min", "h"};
  static const double scale[] = {1e9, 1e6, 1e3, 1e3, 1, 60e9, 60e9, 3600e9};
  double v;
  if (scaled(s, units, scale, 8, 1e9, &v) != 0 || v >= 1.8e19)
    return -1;
  *ns = (uint64_t)(v + 0.5);
  return 0;
}

int gt_parse_size(const char *s, uint64_t *bytes) {
  static const char *const units[] = {"B", "K",   "KiB", "M",  "MiB", "G", "GiB",
                                      "T", "TiB", "KB",  "MB", "GB",  "TB"};
  static const double scale[] = {1,      0x1p10, 0x1p10, 0x1p20, 0x1p20, 0x1p30, 0x1p30,
                                 0x1p40, 0x1p40, 1e3,    1e6,    1e9,    1e12};
  double v;
  if (scaled(s, units, scale, 13, 1, &v) != 0 || v >= 1.8e19)
    return -1;
  *bytes = (uint64_t)(v + 0.5);
  return 0;
}

int gt_parse_decimal(const char *s, uint64_t *n) {
  uint64_t v = 0;
  if (!*s)
    return -1;
  for (const char *p = s; *p; p++) {
    unsigned digit = (unsigned)(*p - '0');
    if (digit > 9 || v > (UINT64_MAX - digit) / 10)
      return -1;
    v = v * 10 + digit;
  }
  *n = v;
  return 0;
}

int gt_parse_host_port(const char *s, char *host, size_t hostlen, unsigned *port) {
  const char *colon = strrchr(s, ':');
  uint64_t n;
  if (!colon || colon == s || gt_parse_decimal(colon + 1, &n) != 0 || n > 65535)
    return -1;
  size_t len = (size_t)(colon - s);
  if (s[0] == '[') { /* [::1]:9400 */
    if (len < 2 || colon[-1] != ']')
      return -1;
    s++, len -= 2;
  }
  if (!len || len >= hostlen)
    return -1;
  memcpy(host, s, len);
  host[len] = '\0';
  *port = (unsigned)n;
  return 0;
}
