/* units.h — option values with units, for the CLI and the collector:
 * durations "1.5" or "1.5s", "250ms", "10us", "µs", "800ns", "5m" or "5min", "2h" -> ns;
 * sizes "80GiB", "16G", "512MiB", "1e9" -> bytes; plain counts: decimal
 * digits only (no sign, no space, not empty), up to UINT64_MAX. Each
 * returns 0, or -1 when malformed. gt_parse_decimal allocates nothing and
 * reads no errno: the shim parses its knobs with it. Listening addresses
 * "HOST:PORT", "[V6]:PORT": HOST (brackets removed) into host, PORT
 * decimal 0..65535 (0: the system picks one); -1 when malformed, a HOST
 * that does not fit hostlen included. */
#ifndef GPUTRACE_UNITS_H
#define GPUTRACE_UNITS_H

#include <stddef.h>
#include <stdint.h>

int gt_parse_duration(const char *s, uint64_t *ns);
int gt_parse_size(const char *s, uint64_t *bytes);
int gt_parse_decimal(const char *s, uint64_t *n);
int gt_parse_host_port(const char *s, char *host, size_t hostlen, unsigned *port);

#endif
