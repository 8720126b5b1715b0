/* html_page.c — the document `gputrace html` writes (see html.h): the
 * head (Content-Security-Policy, style), the summary, the verdict and
 * findings, the charts (html_charts.c) in their sections, the sortable
 * tables, and the script (tooltips, sorting, flame graph zoom).
 *
 * Contract:
 *  - One file, nothing fetched: the CSP (default-src 'none'; inline script
 *    and style; images only as data: URLs) makes any request a console
 *    error. Nothing on the page names a URL.
 *  - Every text from the trace is written by ht_text: gt_text_clean (valid
 *    UTF-8, no control bytes), then &, <, >, ", ' and U+2028/U+2029 as
 *    entities. The
 *    script reads trace text only from the DOM and writes it back as
 *    text (textContent), never as markup.
 *  - Tables are <table class="sort">: a click on a header sorts by that
 *    column (numbers by each cell's data-v, text otherwise). The kernel
 *    table is table#kernels, a row per kernel of the report's, in report's
 *    order (rp_kernel_order; the NVTX table rp_range_order). Tables that
 *    grow with the trace (kernels, NVTX ranges, the stacks held at the
 *    peak) and the findings are cut by ht_cut (html.h): a cut table ends
 *    with <tfoot><tr class="more">, "N more ..." and the sums of the rows
 *    left out (outside the body the script sorts), and a note says so.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "util.h"

/* Clean text (gt_text_clean's) escaped for HTML text and attributes. */
static void escape(FILE *o, const char *c) {
  for (const char *p = c; *p; p++)
    switch (*p) {
    case '\xe2': /* U+2028, U+2029: line breaks to a script; as entities */
      if (p[1] == '\x80' && (p[2] == '\xa8' || p[2] == '\xa9')) {
        fprintf(o, "&#x%s;", p[2] == '\xa8' ? "2028" : "2029");
        p += 2;
      } else {
        fputc(*p, o);
      }
      break;
    case '&':
      fputs("&amp;", o);
      break;
    case '<':
      fputs("&lt;", o);
      break;
    case '>':
      fputs("&gt;", o);
      break;
    case '"':
      fputs("&quot;", o);
      break;
    case '\'':
      fputs("&#39;", o);
      break;
    default:
      fputc(*p, o);
    }
}

void ht_text(FILE *o, const char *s) {
  size_t n = strlen(s) + 1;
  char stack[512], *c = n <= sizeof stack ? stack : gt_xcalloc(n, 1);
  escape(o, gt_text_clean(c, n, s));
  if (c != stack)
    free(c);
}

/* gt_text_clean stops at the last whole character that fits: with room
 * for one more than max, a result past max means the text was longer. */
void ht_text_cut(FILE *o, const char *s, size_t max) {
  char c[HT_TITLE_MAX + 8];
  max = max < HT_TITLE_MAX ? max : HT_TITLE_MAX;
  size_t n = strlen(gt_text_clean(c, max + 8, s));
  if (n > max) {
    n = max;
    while (n && ((unsigned char)c[n] & 0xC0) == 0x80)
      n--;
    memcpy(c + n, "\xe2\x80\xa6", 4); /* "…" */
  }
  escape(o, c);
}

void ht_cut_open(struct ht_cut *c, FILE *o, size_t max) {
  *c = (struct ht_cut){.o = o, .start = ftell(o), .max = max};
}

int ht_cut_room(struct ht_cut *c) {
  long at = ftell(c->o);
  if (!c->left && c->shown < c->max && c->start >= 0 && at >= c->start &&
      (size_t)(at - c->start) < HT_PART_BYTES) {
    c->shown++;
    return 1;
  }
  c->left++;
  return 0;
}

static const char style[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;"
    "color:#1f2937;background:#f3f4f6}"
    "main{max-width:1180px;margin:0 auto;padding:12px 20px 40px}"
    "header{background:#111827;color:#f9fafb;padding:14px 20px}"
    "header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#d1d5db}"
    "nav{background:#1f2937;padding:6px 20px;position:sticky;top:0;z-index:2}"
    "nav a{color:#93c5fd;margin-right:16px;text-decoration:none;font-size:13px}"
    "section{background:#fff;border-radius:8px;padding:12px 18px;margin:14px 0;"
    "box-shadow:0 1px 2px rgba(0,0,0,.08)}"
    "h2{font-size:17px;margin:4px 0 10px}h3{font-size:14px;margin:12px 0 "
    "4px;color:#374151}"
    ".kv{display:flex;flex-wrap:wrap;gap:8px 28px}.kv div b{display:block;font-size:12px;"
    "color:#6b7280;font-weight:500}.kv div span{font-size:16px}"
    ".verdict{font-size:20px;font-weight:600}.verdict small{font-size:13px;color:#6b7280;"
    "font-weight:400}"
    ".f{border-left:4px solid #9ca3af;padding:6px 10px;margin:8px 0;background:#f9fafb}"
    ".f.high{border-color:#dc2626}.f.medium{border-color:#f59e0b}.f.low{border-color:#"
    "3b82f6}"
    ".sev{font-size:11px;text-transform:uppercase;font-weight:700;margin-right:6px}"
    ".high .sev{color:#dc2626}.medium .sev{color:#b45309}.low .sev{color:#2563eb}"
    ".ev{color:#4b5563;font-size:12px;font-family:ui-monospace,monospace}"
    ".adv{color:#065f46;font-size:13px}"
    "svg.chart{width:100%;height:auto;display:block}"
    ".ax line{stroke:#e5e7eb}.ax line.tk{stroke:#6b7280}.ax "
    "text{font-size:11px;fill:#4b5563}"
    ".ax text.lbl{font-size:12px;fill:#111827}"
    "polyline.ln{fill:none;stroke-width:1.6}polyline.grow{fill:none;stroke:#dc2626;"
    "stroke-width:2;stroke-dasharray:6 4}"
    ".bands rect{fill:#a78bfa;fill-opacity:.10}.bands rect:hover{fill-opacity:.3}"
    "circle.pk{fill:#dc2626;stroke:#fff;stroke-width:2}text.pkl{font-size:12px;"
    "fill:#991b1b;font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:4px}"
    "rect.p50,i.p50{fill:#60a5fa;background:#60a5fa}rect.p99,i.p99{fill:#f97316;"
    "background:#f97316}"
    "g.bar text{font-size:11px;fill:#374151}g.bar:hover rect{opacity:.8}"
    ".legend{font-size:12px;margin:2px 0 6px}.legend span{margin-right:14px}"
    ".legend i{display:inline-block;width:12px;height:12px;margin-right:4px;"
    "vertical-align:-2px;border-radius:2px}"
    ".note,.none{color:#6b7280;font-size:12px}"
    ".share{display:flex;height:22px;border-radius:4px;overflow:hidden;margin:8px 0 4px}"
    ".share div{height:100%}"
    "table{border-collapse:collapse;width:100%;font-size:12.5px;margin:4px 0 10px}"
    "th{background:#f3f4f6;text-align:right;padding:4px 8px;cursor:pointer;"
    "user-select:none;white-space:nowrap}th:first-child,td:first-child{text-align:left}"
    "th[data-dir=asc]::after{content:' \\25B2'}th[data-dir=desc]::after{content:' "
    "\\25BC'}"
    "td{padding:3px 8px;text-align:right;border-top:1px solid #f3f4f6;"
    "font-variant-numeric:tabular-nums}"
    "td:first-child{max-width:520px;overflow-wrap:anywhere;font-family:ui-monospace,"
    "monospace;font-size:12px}"
    "tr:hover td{background:#eff6ff}"
    "tr.more td{color:#4b5563;font-style:italic;border-top:2px solid #e5e7eb}"
    ".scroll{max-height:460px;overflow:auto}"
    "svg.flame{width:100%;height:auto;display:block;font:11px ui-monospace,monospace}"
    "g.fr{cursor:pointer}g.fr rect{stroke:#fff;stroke-width:.5}g.fr:hover rect"
    "{stroke:#111;stroke-width:1}g.fr text{fill:#111;pointer-events:none}"
    "#tip{position:fixed;display:none;background:rgba(17,24,39,.92);color:#fff;"
    "padding:6px 8px;border-radius:4px;font-size:12px;white-space:pre;"
    "pointer-events:none;z-index:5}";

/* The page's one script: chart tooltips, table sorting, flame zoom. */
static const char script[] =
    "(function(){'use strict';\n"
    "var tip=document.getElementById('tip');\n"
    "function fv(v,u){if(v===''||v===undefined)return '-';v=+v;"
    "if(u==='bytes'){var k=['B','KiB','MiB','GiB','TiB'],i=0;"
    "while(v>=1024&&i<4){v/=1024;i++}return(i?v.toFixed(v<10?2:v<100?1:0):v)+' '+k[i]}"
    "if(u==='pct')return v.toFixed(1)+' %';return String(+v.toPrecision(4))}\n"
    "function ft(s){return s>=1?s.toFixed(3)+' s':s>=1e-3?(s*1e3).toFixed(3)+' ms':"
    "(s*1e6).toFixed(1)+' \\u00b5s'}\n"
    "function show(e,t){tip.textContent=t;tip.style.display='block';"
    "tip.style.left=Math.min(e.clientX+14,innerWidth-260)+'px';"
    "tip.style.top=(e.clientY+14)+'px'}\n"
    "document.querySelectorAll('svg.tchart').forEach(function(svg){\n"
    " var nb=+svg.dataset.nb,dt=+svg.dataset.dt,ml=+svg.dataset.ml,pw=+svg.dataset.pw,"
    "u=svg.dataset.unit;\n"
    " var ls=[].map.call(svg.querySelectorAll('polyline.ln'),function(l){"
    "return{n:l.dataset.name,v:l.dataset.v.split(',')}});\n"
    " var cur=document.createElementNS(svg.namespaceURI,'line');"
    "cur.setAttribute('stroke','#111');cur.setAttribute('stroke-dasharray','3 3');"
    "cur.setAttribute('y1','14');cur.setAttribute('y2','210');"
    "cur.style.display='none';svg.appendChild(cur);\n"
    " svg.addEventListener('mousemove',function(e){var p=svg.createSVGPoint();"
    "p.x=e.clientX;p.y=e.clientY;p=p.matrixTransform(svg.getScreenCTM().inverse());"
    "var i=Math.floor((p.x-ml)/pw*nb);if(i<0||i>=nb){tip.style.display='none';"
    "cur.style.display='none';return}"
    "var x=ml+(i+0.5)*pw/nb;cur.setAttribute('x1',x);cur.setAttribute('x2',x);"
    "cur.style.display='';"
    "var t=ft(i*dt)+' .. '+ft((i+1)*dt);ls.forEach(function(l){"
    "t+='\\n'+l.n+': '+fv(l.v[i],u)});show(e,t)});\n"
    " svg.addEventListener('mouseleave',function(){tip.style.display='none';"
    "cur.style.display='none'})});\n"
    "document.querySelectorAll('table.sort th').forEach(function(th){"
    "th.addEventListener('click',function(){var tb=th.closest('table').tBodies[0],"
    "i=th.cellIndex,asc=th.dataset.dir==='desc';"
    "th.closest('tr').querySelectorAll('th').forEach(function(h){delete h.dataset.dir});"
    "th.dataset.dir=asc?'asc':'desc';var rows=[].slice.call(tb.rows);"
    "rows.sort(function(a,b){var x=a.cells[i],y=b.cells[i],c;"
    "if(x.dataset.v!==undefined&&y.dataset.v!==undefined)c=(+x.dataset.v)-(+y.dataset.v);"
    "else c=x.textContent.localeCompare(y.textContent);return asc?c:-c});"
    "rows.forEach(function(r){tb.appendChild(r)})})});\n"
    "document.querySelectorAll('svg.flame').forEach(function(svg){\n"
    " var W=1100,fr=[].slice.call(svg.querySelectorAll('g.fr'));\n"
    " function lay(x0,w0,d0){fr.forEach(function(g){var x=(+g.dataset.x-x0)/w0,"
    "w=+g.dataset.w/w0,d=+g.dataset.d,l=Math.max(x,0),r=Math.min(x+w,1);"
    "if(r-l<1e-6||(d>=d0&&(x<-1e-9||x+w>1+1e-9))){g.style.display='none';return}"
    "g.style.display='';g.style.opacity=d<d0?0.55:1;var "
    "re=g.children[1],te=g.children[2];"
    "re.setAttribute('x',l*W);re.setAttribute('width',Math.max((r-l)*W,0.5));"
    "te.setAttribute('x',l*W+3);var s=g.children[0].textContent.split('\\n')[0],"
    "n=Math.floor(((r-l)*W-6)/6.6);te.textContent=n<3?'':s.length>n?"
    "s.slice(0,n-1)+'\\u2026':s})}\n"
    " fr.forEach(function(g){g.addEventListener('click',function(){"
    "lay(+g.dataset.x,+g.dataset.w,+g.dataset.d)})});lay(0,1,0)});\n"
    "})();\n";

/* ---- cells ---- */

static void th_row(FILE *o, const char *const *heads, int n, int sorted) {
  fputs("<thead><tr>", o);
  for (int i = 0; i < n; i++)
    fprintf(o, "<th%s>%s</th>", i == sorted ? " data-dir=\"desc\"" : "", heads[i]);
  fputs("</tr></thead><tbody>\n", o);
}

static void td_name(FILE *o, const char *s) {
  fputs("<tr><td>", o);
  ht_text(o, s);
  fputs("</td>", o);
}

static void td_u(FILE *o, uint64_t v) {
  fprintf(o, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
}

static void td_ns(FILE *o, uint64_t ns) {
  char b[32];
  fprintf(o, "<td data-v=\"%" PRIu64 "\">%s</td>", ns, gt_fmt_ns(b, sizeof b, ns));
}

static void td_bytes(FILE *o, uint64_t v) {
  char b[32];
  fprintf(o, "<td data-v=\"%" PRIu64 "\">%s</td>", v, gt_fmt_bytes(b, sizeof b, v));
}

/* A mean per occurrence, as report's text shows it (one decimal). */
static void td_mean(FILE *o, uint64_t sum, uint64_t n) {
  double v = n ? (double)sum / (double)n : 0;
  fprintf(o, "<td data-v=\"%.1f\">%.1f</td>", v, v);
}

static void td_none(FILE *o) {
  fputs("<td data-v=\"-1\">-</td>", o);
}

/* `sorted`: the column the rows come sorted by, largest first. */
static void table_open(FILE *o, const char *id, const char *const *heads, int n,
                       int sorted) {
  fprintf(o, "<div class=\"scroll\"><table class=\"sort\" id=\"%s\">", id);
  th_row(o, heads, n, sorted);
}

static void table_close(FILE *o) {
  fputs("</tbody></table></div>\n", o);
}

/* A cut table's end: a last row, outside the sorted body, of the rows left
 * out (its first cell; the caller writes the others, their sums, and calls
 * more_close). 0: none was, the table is closed. */
static int table_more(FILE *o, const struct ht_cut *cut, const char *what) {
  if (!cut->left) {
    table_close(o);
    return 0;
  }
  fprintf(o, "</tbody><tfoot><tr class=\"more\"><td>%zu more %s</td>", cut->left, what);
  return 1;
}

/* `lister`: the command that lists every row. */
static void more_close(FILE *o, const struct ht_cut *cut, const char *what,
                       const char *lister) {
  fprintf(o,
          "</tr></tfoot></table></div>\n<p class=\"note more\">The table shows the "
          "first %zu %s; the last row sums the %zu more (%s lists them all).</p>\n",
          cut->shown, what, cut->left, lister);
}

/* ---- sections ---- */

static void kv(FILE *o, const char *k, const char *v) {
  fprintf(o, "<div><b>%s</b><span>", k);
  ht_text(o, v);
  fputs("</span></div>", o);
}

static void summary(FILE *o, const struct ht_data *d, const char *trace) {
  const struct report *r = d->r;
  char b[96], c[32];
  fputs("<header><h1>gputrace &mdash; ", o);
  ht_text(o, gt_base_name(trace));
  fputs("</h1><p>", o);
  ht_text(o, trace);
  fputs("</p></header>\n<nav><a href=\"#verdict\">Verdict</a><a href=\"#memory-s\">Memory"
        "</a><a href=\"#device\">Device</a><a href=\"#requests\">Requests</a>"
        "<a href=\"#tables\">Tables</a><a href=\"#flames\">Flame "
        "graphs</a></nav>\n<main>\n",
        o);
  fputs("<section><div class=\"kv\">", o);
  snprintf(b, sizeof b, "%" PRIu64, r->records);
  kv(o, "records", b);
  snprintf(b, sizeof b, "%zu", r->nprocs);
  kv(o, "processes", b);
  snprintf(b, sizeof b, "%" PRIu64, r->cuda_calls);
  kv(o, "CUDA calls", b);
  kv(o, "span of calls",
     gt_fmt_ns(b, sizeof b, r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0));
  snprintf(b, sizeof b, "%s (pid %u)", gt_fmt_bytes(c, sizeof c, r->peak_device_bytes),
           r->peak_pid);
  kv(o, "peak device+managed memory", r->peak_device_bytes ? b : "none");
  snprintf(b, sizeof b, "%" PRIu64 " DEVICE records", r->dev_records);
  kv(o, "device timing", r->dev_records ? b : "none (CPU-side model)");
  if (d->has_pid) {
    snprintf(b, sizeof b, "%u", d->pid);
    kv(o, "process", b);
  }
  if (r->opt.from_ns || r->opt.to_ns != UINT64_MAX) {
    char e[32];
    snprintf(b, sizeof b, "%s .. %s", gt_fmt_ns(c, sizeof c, r->opt.from_ns),
             r->opt.to_ns == UINT64_MAX ? "end" : gt_fmt_ns(e, sizeof e, r->opt.to_ns));
    kv(o, "window", b);
  }
  if (r->damaged)
    kv(o, "trace", "damaged: what could be read is shown");
  fputs("</div></section>\n", o);
}

/* idle: the last share's name ("idle" of threads, "host" of requests) */
static void shares(FILE *o, const struct rp_shares *s, const char *idle) {
  const char *const names[] = {"copies", "kernels", "launch", "sync", "api", idle};
  static const char *const colors[] = {"#f97316", "#2563eb", "#a855f7",
                                       "#dc2626", "#14b8a6", "#d1d5db"};
  uint64_t v[] = {s->copy, s->kernel, s->launch, s->sync, s->api, s->idle};
  double w = s->traced ? (double)s->traced : 1;
  fputs("<div class=\"share\">", o);
  for (int i = 0; i < 6; i++)
    fprintf(o, "<div style=\"width:%.3f%%;background:%s\" title=\"%s %.1f %%\"></div>",
            100.0 * (double)v[i] / w, colors[i], names[i], 100.0 * (double)v[i] / w);
  fputs("</div><div class=\"legend\">", o);
  for (int i = 0; i < 6; i++)
    fprintf(o, "<span><i style=\"background:%s\"></i>%s %.1f %%</span>", colors[i],
            names[i], 100.0 * (double)v[i] / w);
  fputs("</div>\n", o);
}

static void evidence(FILE *o, const struct rp_finding *f) {
  char b[32];
  fputs("<div class=\"ev\">", o);
  for (int k = 0; k < f->nev; k++) {
    const struct rp_ev *e = &f->ev[k];
    fprintf(o, "%s%s=", k ? " &middot; " : "", e->key);
    if (e->type == RP_EV_U64)
      fprintf(o, "%" PRIu64, e->u);
    else if (e->type == RP_EV_NS)
      fputs(gt_fmt_ns(b, sizeof b, e->u), o);
    else if (e->type == RP_EV_BYTES)
      fputs(gt_fmt_bytes(b, sizeof b, e->u), o);
    else if (e->type == RP_EV_FRAC)
      fprintf(o, "%.1f%%", 100 * e->d);
    else
      ht_text(o, e->s);
  }
  fputs("</div>", o);
}

static void verdict(FILE *o, const struct report *r) {
  fputs("<section id=\"verdict\"><h2>Verdict</h2>\n<div class=\"verdict\">", o);
  if (!r->verdict) {
    fputs("no data <small>(no CUDA call in the window)</small></div>\n", o);
  } else {
    fprintf(o, "%s <small>%.1f %% of %s", r->verdict, 100 * r->verdict_share,
            r->serve.traced ? "the time in requests" : "traced host time");
    if (r->runner_up)
      fprintf(o, "; close to %s (%.1f %%)", r->runner_up, 100 * r->runner_up_share);
    fputs("</small></div>\n", o);
    if (r->serve.traced) { /* docs/report.md, "Serving time: requests" */
      shares(o, &r->serve, "host");
      fputs("<p class=\"note\">Whole process (every thread's span, waiting for work "
            "included):</p>\n",
            o);
    }
    shares(o, &r->sh, "idle");
  }
  fprintf(o, "<h3>Findings (%zu)</h3>\n", r->nfindings);
  if (!r->nfindings)
    fputs("<p class=\"none\">none</p>\n", o);
  struct ht_cut cut;
  ht_cut_open(&cut, o, HT_ROWS);
  for (size_t i = 0; i < r->nfindings; i++) {
    const struct rp_finding *f = &r->findings[i];
    if (!ht_cut_room(&cut))
      continue;
    fprintf(o,
            "<div class=\"f %s\"><span class=\"sev\">%s</span><b>%s</b>: ", f->severity,
            f->severity, f->rule);
    ht_text(o, f->message);
    evidence(o, f);
    fputs("<div class=\"adv\">", o);
    ht_text(o, f->advice);
    fputs("</div></div>\n", o);
  }
  if (cut.left)
    fprintf(o,
            "<p class=\"note more\">%zu more findings, not shown (the page keeps the "
            "first %zu): gputrace report lists them all.</p>\n",
            cut.left, cut.shown);
  fputs("</section>\n", o);
}

static void share_cell(FILE *o, uint64_t part, uint64_t whole) {
  double f = whole ? (double)part / (double)whole : 0;
  fprintf(o, "<td data-v=\"%.6f\">%.1f %%</td>", f, 100.0 * f);
}

#define HELD_ROWS 20 /* stacks shown of those held at the peak */

/* The stacks holding the most at the largest peak (leaks.h). */
static void held_at_peak(FILE *o, const struct ht_data *d, const struct gt_leaks *l) {
  const struct gt_proc_summary *top = NULL;
  for (size_t p = 0; p < l->nprocs; p++)
    if ((!d->has_pid || l->procs[p].pid == d->pid) && l->procs[p].nat_peak &&
        (!top || l->procs[p].peak_device > top->peak_device))
      top = &l->procs[p];
  if (!top)
    return;
  char b[32], t[32];
  fprintf(o, "<h3>Held at the peak: pid %u, %s of device memory at +%s</h3>\n", top->pid,
          gt_fmt_bytes(b, sizeof b, top->peak_device),
          gt_fmt_ns(t, sizeof t, top->peak_ts - d->r->origin));
  static const char *const heads[] = {"allocated at", "bytes", "blocks", "share"};
  table_open(o, "held", heads, 4, 1);
  struct ht_cut cut;
  ht_cut_open(&cut, o, HELD_ROWS);
  uint64_t rest_bytes = 0, rest_blocks = 0;
  for (size_t i = 0; i < top->nat_peak; i++) {
    const struct gt_group *g = &top->at_peak[i];
    if (!ht_cut_room(&cut)) {
      rest_bytes += g->bytes;
      rest_blocks += g->blocks;
      continue;
    }
    struct gt_frame f[64];
    int n = g->stack_id ? gt_symtab_stack(l->symtab, g->pid, g->stack_id, f, 64) : 0;
    const struct gt_frame *at = gt_leaks_origin(f, n);
    char site[600];
    if (!at)
      snprintf(site, sizeof site, "[no stack]");
    else if (at->file[0])
      snprintf(site, sizeof site, "%s at %s:%u", at->function, gt_base_name(at->file),
               at->line);
    else
      snprintf(site, sizeof site, "%s", at->function);
    td_name(o, site);
    td_bytes(o, g->bytes);
    td_u(o, g->blocks);
    share_cell(o, g->bytes, top->peak_device);
    fputs("</tr>\n", o);
  }
  if (table_more(o, &cut, "stacks")) {
    td_bytes(o, rest_bytes);
    td_u(o, rest_blocks);
    share_cell(o, rest_bytes, top->peak_device);
    more_close(o, &cut, "stacks", "gputrace leaks");
  }
}

/* ---- tables ---- */

/* API rows by host time, largest first, ties by index (as report's);
 * kernels and ranges in report's order (rp_kernel_order, rp_range_order). */
static int by_api_total(const struct report *r, size_t a, size_t b) {
  uint64_t x = r->api[a].durs.sum, y = r->api[b].durs.sum;
  return x < y ? 1 : x > y ? -1 : 0;
}

struct order_ctx {
  const struct report *r;
  int (*cmp)(const struct report *, size_t, size_t);
};

static int order_cmp(const void *a, const void *b, void *ctx) {
  const struct order_ctx *c = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int d = c->cmp(c->r, x, y);
  return d ? d : x < y ? -1 : x > y;
}

/* Indexes 0..n-1 sorted by cmp (malloc'd); *len = n. */
static size_t *order(const struct report *r, size_t n,
                     int (*cmp)(const struct report *, size_t, size_t), size_t *len) {
  size_t *ord = gt_xcalloc(n ? n : 1, sizeof *ord);
  for (size_t i = 0; i < n; i++)
    ord[i] = i;
  struct order_ctx c = {r, cmp};
  if (n)
    qsort_r(ord, n, sizeof *ord, order_cmp, &c);
  *len = n;
  return ord;
}

static void api_table(FILE *o, const struct report *r) {
  static const char *const heads[] = {"API", "calls", "errors", "total", "mean",
                                      "p50", "p90",   "p99",    "max"};
  fputs("<h3>CUDA API (host time in calls)</h3>\n", o);
  table_open(o, "api", heads, 9, 3);
  size_t n = 0, *ord = order(r, GT_API_COUNT, by_api_total, &n);
  for (size_t i = 0; i < n; i++) {
    unsigned a = (unsigned)ord[i];
    const struct rp_api *x = &r->api[a];
    if (!x->calls)
      continue;
    td_name(o, gt_api_name(a));
    td_u(o, x->calls);
    td_u(o, x->errors);
    td_ns(o, x->durs.sum);
    td_ns(o, x->durs.sum / x->calls);
    td_ns(o, x->p50);
    td_ns(o, x->p90);
    td_ns(o, x->p99);
    td_ns(o, x->durs.max);
    fputs("</tr>\n", o);
  }
  free(ord);
  table_close(o);
}

/* The kernels left out of the table, summed. */
struct kernel_sums {
  uint64_t launches, cpu_ns, gpu_scaled_ns, gpu_ns, gpu_timed, gpu_max_ns;
  uint64_t gpu_upper; /* of gpu_timed: upper bounds (GT_F_UPPER_BOUND) */
};

static void kernel_cells(FILE *o, const struct kernel_sums *k) {
  td_u(o, k->launches);
  td_ns(o, k->cpu_ns);
  td_ns(o, k->launches ? k->cpu_ns / k->launches : 0);
  if (k->gpu_timed) {
    td_ns(o, k->gpu_scaled_ns);
    if (k->gpu_upper) { /* events spans that overlapped other streams' work */
      char b[32];
      fprintf(
          o,
          "<td data-v=\"%" PRIu64 "\" title=\"%" PRIu64 " of %" PRIu64
          " timed runs overlapped another stream's work: may include waiting\">%s upper "
          "bound</td>",
          k->gpu_ns / k->gpu_timed, k->gpu_upper, k->gpu_timed,
          gt_fmt_ns(b, sizeof b, k->gpu_ns / k->gpu_timed));
    } else {
      td_ns(o, k->gpu_ns / k->gpu_timed);
    }
    td_ns(o, k->gpu_max_ns);
  } else {
    td_none(o), td_none(o), td_none(o);
  }
}

static void kernel_add(struct kernel_sums *sum, const struct rp_kernel *k) {
  sum->launches += k->launches;
  sum->cpu_ns += k->cpu_ns;
  sum->gpu_scaled_ns += k->gpu_scaled_ns;
  sum->gpu_ns += k->gpu_ns;
  sum->gpu_timed += k->gpu_timed;
  sum->gpu_upper += k->gpu_upper;
  sum->gpu_max_ns = k->gpu_max_ns > sum->gpu_max_ns ? k->gpu_max_ns : sum->gpu_max_ns;
}

static void kernel_table(FILE *o, const struct report *r) {
  static const char *const heads[] = {"kernel",      "launches",  "launch total",
                                      "launch mean", "GPU total", "GPU mean",
                                      "GPU max"};
  fprintf(o, "<h3>Kernels%s</h3>\n",
          r->dev_sample > 1 ? " (GPU times scaled from sampled DEVICE records)" : "");
  table_open(o, "kernels", heads, 7, 4);
  size_t n = r->knames.n, *ord = rp_kernel_order(r);
  struct ht_cut cut;
  struct kernel_sums rest = {0};
  ht_cut_open(&cut, o, HT_ROWS);
  for (size_t j = 0; j < n; j++) {
    size_t i = ord[j];
    const struct rp_kernel *k = &r->kern[i];
    if (!k->launches && !k->gpu_timed)
      continue;
    if (!ht_cut_room(&cut)) {
      kernel_add(&rest, k);
      continue;
    }
    struct kernel_sums one = {0};
    kernel_add(&one, k);
    td_name(o, rp_kernel_name(r, i));
    kernel_cells(o, &one);
    fputs("</tr>\n", o);
  }
  free(ord);
  if (table_more(o, &cut, "kernels")) {
    kernel_cells(o, &rest);
    more_close(o, &cut, "kernels", "gputrace report");
  }
}

static void transfer_table(FILE *o, const struct report *r) {
  static const char *const heads[] = {"direction", "count",     "bytes",    "async",
                                      "pageable",  "host time", "GPU time", "GB/s"};
  fputs("<h3>Transfers</h3>\n", o);
  table_open(o, "transfers", heads, 8, -1);
  for (unsigned d = 0; d < RP_XFER_ROWS; d++) {
    const struct rp_xfer *x = &r->xfer[d];
    if (!x->count && !x->gpu_timed)
      continue;
    td_name(o, d == RP_XFER_MEMSET ? "memset" : gt_dir_name(d));
    td_u(o, x->count);
    td_bytes(o, x->bytes);
    td_u(o, x->async);
    td_u(o, x->pageable);
    td_ns(o, x->host_ns);
    if (x->gpu_timed && x->gpu_ns) {
      td_ns(o, x->gpu_scaled_ns);
      double gbps = (double)x->gpu_bytes / (double)x->gpu_ns;
      fprintf(o, "<td data-v=\"%.6f\">%.2f</td>", gbps, gbps);
    } else {
      td_none(o), td_none(o);
    }
    fputs("</tr>\n", o);
  }
  table_close(o);
}

static void sync_table(FILE *o, const struct report *r) {
  static const char *const heads[] = {"API",     "calls",  "blocked",    "max",
                                      "kernels", "copies", "unexplained"};
  fputs("<h3>Synchronization (time the host was blocked, and what it waited for)</h3>\n",
        o);
  table_open(o, "sync", heads, 7, -1);
  for (unsigned a = 0; a < GT_API_COUNT; a++) {
    const struct rp_sync *s = &r->sync[a];
    if (!s->calls)
      continue;
    td_name(o, gt_api_name(a));
    td_u(o, s->calls);
    td_ns(o, s->total_ns);
    td_ns(o, s->max_ns);
    td_ns(o, s->kernel_ns);
    td_ns(o, s->copy_ns);
    td_ns(o, s->sync_ns);
    fputs("</tr>\n", o);
  }
  table_close(o);
}

/* A range's warm figures; "-" for a range that ran once (it has none, as
 * report's "(once)"), never 0 ns. */
static void range_warm(FILE *o, const struct rp_range *g) {
  if (!g->warm) {
    for (int i = 0; i < 8; i++)
      td_none(o);
    return;
  }
  td_ns(o, g->p50);
  td_ns(o, g->p90);
  td_ns(o, g->p99);
  td_ns(o, g->max);
  td_ns(o, g->mean);
  td_mean(o, g->launches, g->warm); /* per range, as report's columns */
  td_bytes(o, g->bytes / g->warm);
  td_mean(o, g->allocs, g->warm);
}

/* The ranges left out of the table: their occurrences and warm sums. */
struct range_sums {
  uint64_t n, warm, warm_ns, max, launches, bytes, allocs, gpu_ns;
};

static void range_add(struct range_sums *sum, const struct rp_range *g) {
  sum->n += g->n;
  sum->warm += g->warm;
  sum->warm_ns += g->warm_d.sum;
  sum->max = g->warm && g->max > sum->max ? g->max : sum->max;
  sum->launches += g->launches;
  sum->bytes += g->bytes;
  sum->allocs += g->allocs;
  sum->gpu_ns += g->gpu_ns + g->cold.gpu_ns;
}

/* Percentiles do not add up: "-"; the rest as the warm figures'. */
static void range_rest(FILE *o, const struct range_sums *s) {
  td_u(o, s->n);
  for (int i = 0; i < 4; i++)
    td_none(o);
  if (!s->warm) {
    for (int i = 0; i < 5; i++)
      td_none(o);
  } else {
    td_ns(o, s->max);
    td_ns(o, s->warm_ns / s->warm);
    td_mean(o, s->launches, s->warm);
    td_bytes(o, s->bytes / s->warm);
    td_mean(o, s->allocs, s->warm);
  }
  td_ns(o, s->gpu_ns);
}

static void range_table(FILE *o, const struct report *r) {
  static const char *const heads[] = {"range",    "count",  "first",  "p50",
                                      "p90",      "p99",    "max",    "mean",
                                      "launches", "copied", "allocs", "GPU total"};
  fputs("<h3>NVTX ranges (first: the cold start; the rest over the warm occurrences: all "
        "but the first; launches, copied and allocs are means per range, as in gputrace "
        "report; GPU total: the device time of each range's own work, all "
        "occurrences)</h3>\n",
        o);
  table_open(o, "nvtx", heads, 12, -1);
  size_t n = r->rnames.n, *ord = rp_range_order(r);
  struct ht_cut cut;
  struct range_sums rest = {0};
  ht_cut_open(&cut, o, HT_ROWS);
  for (size_t j = 0; j < n; j++) {
    const struct rp_range *g = &r->ranges[ord[j]];
    if (!ht_cut_room(&cut)) {
      range_add(&rest, g);
      continue;
    }
    td_name(o, r->rnames.strs[ord[j]]);
    td_u(o, g->n);
    if (g->n && g->cold.end >= g->cold.start)
      td_ns(o, g->cold.end - g->cold.start);
    else
      td_none(o);
    range_warm(o, g);
    if (r->dev_records) /* its own work's device time, all occurrences (range_gpu.h) */
      td_ns(o, g->gpu_ns + g->cold.gpu_ns);
    else
      td_none(o);
    fputs("</tr>\n", o);
  }
  free(ord);
  if (table_more(o, &cut, "range names")) {
    range_rest(o, &rest);
    more_close(o, &cut, "range names", "gputrace report");
  }
}

/* ---- the page ---- */

static void head(FILE *o, const char *trace) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
        "<title>gputrace: ",
        o);
  ht_text(o, gt_base_name(trace));
  fprintf(o, "</title>\n<style>%s</style></head><body>\n", style);
}

static void device_section(FILE *o, const struct ht_data *d) {
  fputs("<section id=\"device\"><h2>Device utilization</h2>\n<p class=\"note\">Share of "
        "each interval the device ran the process's kernels or copies (DEVICE "
        "records).</p>\n",
        o);
  ht_util_chart(o, d);
  fputs("<h2>NVML readings</h2>\n", o);
  ht_metric_charts(o, d);
  fputs("</section>\n", o);
}

static void flames(FILE *o, const struct ht_data *d, const struct gt_leaks *l) {
  fputs("<section id=\"flames\"><h2>Flame graphs</h2><p class=\"note\">Root on top; "
        "click a frame to zoom into it, the top frame to zoom out. Hover for "
        "values.</p>\n<h3>Device memory live at each process's peak</h3>\n",
        o);
  ht_flame(o, d, l, HT_FLAME_PEAK);
  fputs("<h3>Memory still allocated at the end (leaked)</h3>\n", o);
  ht_flame(o, d, l, HT_FLAME_EXIT);
  fputs("<h3>GPU time by launching line (estimated from launch stacks)</h3>\n", o);
  ht_flame(o, d, l, HT_FLAME_GPU);
  fputs("</section>\n", o);
}

void ht_page(FILE *out, const struct ht_data *d, const struct gt_leaks *l,
             const char *trace) {
  const struct report *r = d->r;
  char *page = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&page, &len);
  if (!o)
    gt_oom();
  head(o, trace);
  summary(o, d, trace);
  verdict(o, r);
  fputs("<section id=\"memory-s\"><h2>Device memory over time</h2>\n", o);
  ht_memory_chart(o, d, l);
  held_at_peak(o, d, l);
  fputs("</section>\n", o);
  device_section(o, d);
  fputs("<section id=\"requests\"><h2>Requests: p50 and p99 per NVTX range</h2>\n", o);
  if (r->rnames.n)
    ht_range_histogram(o, r);
  else
    fputs("<p class=\"none\">No NVTX ranges in the window.</p>\n", o);
  range_table(o, r);
  fputs("</section>\n<section id=\"tables\"><h2>Tables</h2><p class=\"note\">Click a "
        "header to sort.</p>\n",
        o);
  api_table(o, r);
  kernel_table(o, r);
  transfer_table(o, r);
  sync_table(o, r);
  fputs("</section>\n", o);
  flames(o, d, l);
  fprintf(o, "</main>\n<div id=\"tip\"></div>\n<script>\n%s</script>\n</body></html>\n",
          script);
  if (fclose(o) != 0)
    gt_oom();
  fwrite(page, 1, len, out);
  free(page);
}
