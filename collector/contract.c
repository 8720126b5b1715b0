/* contract.c — the contract (include/gputrace/protocol.h) this collector
 * speaks. Alone in its file so the tests can build the same collector
 * claiming another kind count (GT_CONTRACT_KINDS, tests/CMakeLists.txt):
 * every other file sees the real tables. */
#include "collector.h"

struct gt_contract gt_collector_contract(void) {
  return gt_contract_ours();
}
