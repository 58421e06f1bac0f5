#ifndef KEYCHAIN_SQLITE_CONFIG_H
#define KEYCHAIN_SQLITE_CONFIG_H

#include <sqlite3.h>

/// Makes closing this connection skip SQLite's checkpoint on close (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE).
/// sqlite3_db_config is variadic, which Swift cannot call. Returns an SQLite result code.
int keychain_sqlite_skip_checkpoint_on_close(sqlite3 *db);

#endif
