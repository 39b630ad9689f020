#ifndef SWIFTLET_CSQLITE_SHIM_H
#define SWIFTLET_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: SQLite copies the
/// bound value before the bind call returns.
static inline sqlite3_destructor_type swiftlet_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
#endif
