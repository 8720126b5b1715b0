/* replay.c — run a fuzz target over files or directories of inputs without
 * libFuzzer (ctest replays the seed corpus this way, under the sanitizers
 * of the build). Prints how many inputs ran; exits 1 if none could be read. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  size_t got = buf ? fread(buf, 1, (size_t)(n > 0 ? n : 0), f) : 0;
  fclose(f);
  if (buf)
    LLVMFuzzerTestOneInput(buf, got);
  free(buf);
  return buf != NULL;
}

int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0)
      continue;
    if (!S_ISDIR(st.st_mode)) {
      ran += run_file(argv[i]);
      continue;
    }
    DIR *d = opendir(argv[i]);
    for (struct dirent *e; d && (e = readdir(d));) {
      if (e->d_name[0] == '.')
        continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      ran += run_file(path);
    }
    if (d)
      closedir(d);
  }
  printf("replayed %d inputs\n", ran);
  return ran > 0 ? 0 : 1;
}
