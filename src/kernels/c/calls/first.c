/* The first function of a call chain (see chain.h). */
#include "chain.h"

CHAIN_LINKAGE long CHAIN_SECOND(long n);

CHAIN_ALIGNED CHAIN_LINKAGE long CHAIN_FIRST(long n) {
    CLOBBER_CALLEE_SAVED();
    if (n <= 1) return 1;
    return 1 + CHAIN_SECOND(n - 1);
}
