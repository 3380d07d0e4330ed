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

#include <libxml/parserInternals.h>

/// Declares a parser context's input to be UTF-8. libxml2 2.9's HTML parser otherwise reads input
/// without a declared encoding as ISO-8859-1 from its first non-ASCII byte (`htmlCurrentChar`).
static inline int clibxml2_declare_utf8(xmlParserCtxtPtr context) {
    return xmlSwitchEncoding(context, XML_CHAR_ENCODING_UTF8);
}

#endif
