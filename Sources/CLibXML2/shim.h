#ifndef CLIBXML2_SHIM_H
#define CLIBXML2_SHIM_H

// Debian's libxml2 is built with ICU, whose headers clash with the toolchain's own ICU module
// ('UErrorCode' has different definitions): include the version header first and switch ICU off.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

/// `xmlFree` is a global function pointer, which Swift imports awkwardly.
static inline void clibxml2_free(void *pointer) { xmlFree(pointer); }

#endif
