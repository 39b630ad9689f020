#ifndef SWIFTLET_CEXPAT_SHIM_H
#define SWIFTLET_CEXPAT_SHIM_H
// Expat, the XML parser under XMPPCore's stream parser.
#include <expat.h>
#endif
