/* options_describe.c — gt_options_describe (gputrace/options.h): a command's
 * option table in the other shapes users read it in: the top-level help's
 * entry, a man page section, a bash completion case arm.
 *
 * Contract: everything printed comes from the struct gt_command alone (the
 * same table the parser reads, the same words as its usage and --help), so
 * the man page and the completion cannot list an option the parser refuses
 * or miss one it takes. No allocation, no global state.
 */
#include <stdio.h>
#include <string.h>

#include "gputrace/options.h"

#define SUMMARY_INDENT 11 /* the usage under a command's name in the top-level help */
#define WIDTH 80

static int takes_value(const struct gt_option *o) {
  return o->type != GT_OPTION_FLAG && o->type != GT_OPTION_SET;
}

static const char *arg_of(const struct gt_option *o) {
  return o->arg ? o->arg : "VALUE";
}

/* The command's name: prog's last word ("gputrace flame": "flame"). */
static const char *name_of(const struct gt_command *c) {
  const char *sp = strrchr(c->prog, ' ');
  return sp ? sp + 1 : c->prog;
}

/* roff text: backslashes and hyphens escaped, a leading '.' or '\'' made
 * literal, so a help string can never become a request; with keep, its
 * spaces unbreakable, so a usage word ("[-o\ FILE]") stays on one line. */
static void roff_word(FILE *to, const char *s, int keep) {
  if (*s == '.' || *s == '\'')
    fputs("\\&", to);
  for (; *s; s++) {
    if (*s == '\\')
      fputs("\\e", to);
    else if (*s == '-')
      fputs("\\-", to);
    else if (*s == ' ' && keep)
      fputs("\\ ", to);
    else
      fputc(*s, to);
  }
}

void gt_options_roff(FILE *to, const char *text) {
  roff_word(to, text, 0);
}

/* Words of text after column *col, a space before each, wrapped to WIDTH;
 * a continuation line's words begin at column indent. */
static void wrapped(FILE *to, const char *text, int indent, int *col) {
  for (const char *p = text; *p;) {
    p += strspn(p, " ");
    int n = (int)strcspn(p, " ");
    if (!n)
      break;
    if (*col >= indent && *col + 1 + n > WIDTH)
      *col = fprintf(to, "\n%*s", indent - 1, "") - 1;
    *col += fprintf(to, " %.*s", n, p);
    p += n;
  }
}

static void summary(const struct gt_command *c, FILE *to) {
  int col = fprintf(to, "  %-8s", name_of(c));
  wrapped(to, c->about ? c->about : "", SUMMARY_INDENT, &col);
  col = fprintf(to, "\n%*s%s", SUMMARY_INDENT, "", c->prog) - 1;
  char word[256];
  for (const struct gt_option *o = c->options; o->name;) {
    o = gt_options_word(o, word, sizeof word);
    /* one word, even with a space inside ("[-o FILE]") */
    int n = (int)strlen(word);
    if (col + 1 + n > WIDTH)
      col = fprintf(to, "\n%*s", SUMMARY_INDENT + 2, "") - 1;
    col += fprintf(to, " %s", word);
  }
  if (c->args)
    wrapped(to, c->args, SUMMARY_INDENT + 3, &col);
  fputc('\n', to);
}

/* ".TP" then "\fB-o\fR, \fB--output\fR \fIFILE\fR" then the help. */
static void man_option(FILE *to, char short_name, const char *name, const char *arg,
                       const char *help) {
  fputs(".TP\n", to);
  if (short_name)
    fprintf(to, "\\fB\\-%c\\fR, ", short_name);
  fputs("\\fB\\-\\-", to);
  gt_options_roff(to, name);
  fputs("\\fR", to);
  if (arg) {
    fputs(" \\fI", to);
    gt_options_roff(to, arg);
    fputs("\\fR", to);
  }
  fputc('\n', to);
  gt_options_roff(to, help ? help : "");
  fputc('\n', to);
}

static void man(const struct gt_command *c, FILE *to) {
  char word[256];
  fprintf(to, ".SS %s\n\\fB", name_of(c));
  gt_options_roff(to, c->prog);
  fputs("\\fR\n", to);
  for (const struct gt_option *o = c->options; o->name;) {
    o = gt_options_word(o, word, sizeof word);
    roff_word(to, word, 1);
    fputc('\n', to);
  }
  if (c->args) {
    gt_options_roff(to, c->args);
    fputc('\n', to);
  }
  if (c->about) {
    fputs(".PP\n", to);
    gt_options_roff(to, c->about);
    fputs(".\n", to);
  }
  for (const struct gt_option *o = c->options; o->name; o++)
    man_option(to, o->short_name, o->name, takes_value(o) ? arg_of(o) : NULL, o->help);
  man_option(to, 'h', "help", NULL, "print the command's help");
  if (c->version)
    man_option(to, 0, "version", NULL, "print the version");
}

/* Which completion a value wants: files, directories or nothing. */
static const char *value_kind(const struct gt_option *o) {
  const char *a = arg_of(o);
  if (strstr(a, "DIR"))
    return "dirs";
  if (strstr(a, "FILE") || strstr(a, "OUT") || strstr(a, "PATH"))
    return "files";
  return "args";
}

/* name='--a -b --b ...': the options of one completion kind ("opts": all). */
static void bash_list(const struct gt_command *c, const char *kind, FILE *to) {
  const char *sep = "";
  fprintf(to, " %s='", kind);
  for (const struct gt_option *o = c->options; o->name; o++) {
    if (strcmp(kind, "opts") && (!takes_value(o) || strcmp(value_kind(o), kind)))
      continue;
    if (o->short_name)
      fprintf(to, "%s-%c", sep, o->short_name), sep = " ";
    fprintf(to, "%s--%s", sep, o->name), sep = " ";
  }
  if (!strcmp(kind, "opts"))
    fprintf(to, "%s-h --help%s", sep, c->version ? " --version" : "");
  fputc('\'', to);
}

static void bash(const struct gt_command *c, FILE *to) {
  fprintf(to, "  %s)\n   ", name_of(c));
  bash_list(c, "opts", to);
  fputs("\n   ", to);
  bash_list(c, "files", to);
  bash_list(c, "dirs", to);
  bash_list(c, "args", to);
  fprintf(to, "\n    positional=%s ;;\n",
          c->flags & GT_CMD_STOP_AT_ARG ? "command"
          : c->args                     ? "files"
                                        : "none");
}

int gt_options_describe(const struct gt_command *c, const char *what, FILE *to) {
  if (!strcmp(what, "summary"))
    summary(c, to);
  else if (!strcmp(what, "man"))
    man(c, to);
  else if (!strcmp(what, "bash"))
    bash(c, to);
  else
    return -1;
  return 0;
}
