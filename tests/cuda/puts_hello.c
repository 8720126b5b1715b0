/* puts_hello.c — calls puts(); run with next_wrapper.so preloaded. */
#include <stdio.h>

int main(void) {
  return puts("hello") < 0;
}
