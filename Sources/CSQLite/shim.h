#ifndef SWIFTLET_CSQLITE_SHIM_H
#define SWIFTLET_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: SQLite copies the
/// bound value before the bind call returns.
static inline sqlite3_destructor_type swiftlet_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// Turns off SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`), which
/// otherwise take a process-wide mutex on every allocation and free.
/// `sqlite3_config` is variadic, which Swift cannot call. It must run before
/// SQLite is initialized (the first connection opens); afterwards it
/// changes nothing and returns `SQLITE_MISUSE`.
static inline int swiftlet_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
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
