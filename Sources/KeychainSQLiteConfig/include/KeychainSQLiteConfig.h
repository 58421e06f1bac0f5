#ifndef KEYCHAIN_SQLITE_CONFIG_H
#define KEYCHAIN_SQLITE_CONFIG_H

#include <sqlite3.h>

/// Makes closing this connection skip SQLite's checkpoint on close (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE).
/// sqlite3_db_config is variadic, which Swift cannot call. Returns an SQLite result code.
int keychain_sqlite_skip_checkpoint_on_close(sqlite3 *db);

/// After each commit that leaves `frames` frames or more in the WAL, checkpoints it without
/// waiting for readers or writers (then it checkpoints what it can, passively), and restores the
/// connection's busy timeout of `busy_milliseconds`. The WAL is truncated (SQLITE_CHECKPOINT_TRUNCATE)
/// unless `restart_in_place`: then it is restarted (SQLITE_CHECKPOINT_RESTART), and later commits
/// overwrite the file from its start instead of growing it again (decision 0246) — only for a
/// process that keeps the keychain open, since SQLite forgets a restart with its last connection.
/// Replaces `PRAGMA wal_autocheckpoint`, whose passive checkpoints never reset the WAL when each
/// process writes once: SQLite forgets what was checkpointed when the last connection closes, so
/// the WAL only grew, and every later commit checkpointed all of it again (docs/decisions/0160).
/// Returns an SQLite result code.
int keychain_sqlite_checkpoint_wal_after(sqlite3 *db, int frames, int busy_milliseconds, int restart_in_place);

/// Makes "synckeychain" the process's default SQLite VFS (once; later calls return the first
/// result): the system's unix VFS, except that a WAL file that already exists is opened without
/// SQLITE_OPEN_CREATE, which spares every writing process SQLite's fsync of the WAL's directory,
/// and a WAL file it creates has its directory fsynced at once (docs/decisions/0160).
/// Returns an SQLite result code.
int keychain_sqlite_register_vfs(void);

#endif
