#ifndef CLIBIDN2_SHIM_H
#define CLIBIDN2_SHIM_H

// libidn2 (IDNA2008, RFC 5891/5892 with UTS #46 mapping): domain names to and from A-labels.
#include <idn2.h>
#include <stdlib.h>

/// Strings returned by libidn2 are released with `idn2_free`; wrapped so Swift has one call.
static inline void clibidn2_free(void *pointer) { idn2_free(pointer); }

#endif
