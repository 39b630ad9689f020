#ifndef SWIFTLET_CSQLITE_SHIM_H
#define SWIFTLET_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: SQLite copies the
/// bound value before the bind call returns.
static inline sqlite3_destructor_type swiftlet_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// SQLite's extended result codes are macros built with `|` and `<<`
/// (`SQLITE_CONSTRAINT | (8<<8)`), which Swift cannot import; these
/// constants carry the same values.
enum {
    swiftlet_SQLITE_CONSTRAINT_CHECK = SQLITE_CONSTRAINT_CHECK,
    swiftlet_SQLITE_CONSTRAINT_FOREIGNKEY = SQLITE_CONSTRAINT_FOREIGNKEY,
    swiftlet_SQLITE_CONSTRAINT_NOTNULL = SQLITE_CONSTRAINT_NOTNULL,
    swiftlet_SQLITE_CONSTRAINT_PRIMARYKEY = SQLITE_CONSTRAINT_PRIMARYKEY,
    swiftlet_SQLITE_CONSTRAINT_UNIQUE = SQLITE_CONSTRAINT_UNIQUE,
};

#endif
