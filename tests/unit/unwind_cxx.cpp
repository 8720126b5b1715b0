// unwind_cxx.cpp — test_unwind.c's C++ helper library: captures taken while
// an exception is in flight, called back from a destructor that runs while
// the exception unwinds the stack and from the catch block.
#include <stdexcept>

namespace {

volatile int sink;

struct Guard {
  void (*at_unwind)(void);
  ~Guard() {
    if (at_unwind)
      at_unwind();
  }
};

__attribute__((noinline)) void thrower(int depth, void (*in_dtor)(void)) {
  Guard g{depth == 0 ? in_dtor : nullptr};
  if (depth == 0)
    throw std::runtime_error("unwind test");
  thrower(depth - 1, in_dtor);
  sink = depth;
}

} // namespace

// Throws from `depth` levels down; in_dtor runs in a destructor during the
// unwinding, in_catch in the catch block. Returns 1 when caught.
extern "C" int uw_cxx_throw(int depth, void (*in_dtor)(void), void (*in_catch)(void)) {
  try {
    thrower(depth, in_dtor);
  } catch (const std::exception &) {
    in_catch();
    return 1;
  }
  return 0;
}
