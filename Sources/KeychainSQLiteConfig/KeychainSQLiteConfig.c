#include "KeychainSQLiteConfig.h"

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

int keychain_sqlite_skip_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

// After a commit that left at least `frames` frames in the WAL (the low 16 bits of `context`;
// the busy timeout to restore, in milliseconds, above them), checkpoint the WAL in `mode`,
// without waiting: with no busy handler, a reader or writer in the way makes this a passive
// checkpoint of what it can, and a later commit tries again.
static int checkpoint_when_long(void *context, sqlite3 *db, const char *schema, int frames, int mode) {
    intptr_t packed = (intptr_t)context;
    if (frames < (int)(packed & 0xFFFF)) return SQLITE_OK;
    sqlite3_busy_timeout(db, 0);
    sqlite3_wal_checkpoint_v2(db, schema, mode, NULL, NULL);
    sqlite3_busy_timeout(db, (int)(packed >> 16));
    return SQLITE_OK;
}

static int truncate_when_long(void *context, sqlite3 *db, const char *schema, int frames) {
    return checkpoint_when_long(context, db, schema, frames, SQLITE_CHECKPOINT_TRUNCATE);
}

static int restart_when_long(void *context, sqlite3 *db, const char *schema, int frames) {
    return checkpoint_when_long(context, db, schema, frames, SQLITE_CHECKPOINT_RESTART);
}

int keychain_sqlite_checkpoint_wal_after(sqlite3 *db, int frames, int busy_milliseconds, int restart_in_place) {
    if (frames <= 0 || frames > 0xFFFF || busy_milliseconds < 0) return SQLITE_MISUSE;
    intptr_t packed = ((intptr_t)busy_milliseconds << 16) | frames;
    sqlite3_wal_hook(db, restart_in_place ? restart_when_long : truncate_when_long, (void *)packed);
    return SQLITE_OK;
}

// The system's VFS, which does all the work, and ours, a copy of it with another xOpen.
static sqlite3_vfs *system_vfs;
static sqlite3_vfs keychain_vfs;
static int registration_result = SQLITE_ERROR;
static pthread_once_t registration = PTHREAD_ONCE_INIT;

// Makes the directory entry of a file just created durable (fsync of its directory).
static void sync_directory_of(const char *path) {
    char copy[PATH_MAX];
    if (strlen(path) >= sizeof copy) return;
    strcpy(copy, path);
    int directory = open(dirname(copy), O_RDONLY | O_CLOEXEC);
    if (directory < 0) return;
    fsync(directory);
    close(directory);
}

// SQLite's unix VFS fsyncs the directory at the first sync of every WAL file it was asked to
// create (SQLITE_OPEN_CREATE), and it asks for every WAL, existing or not: one more sync per
// writing process. A WAL that exists is opened here without SQLITE_OPEN_CREATE, so no directory
// sync; one created here has its directory synced at once, so that every WAL this VFS opened
// without creating it already had its directory entry on disk.
static int keychain_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    if ((flags & SQLITE_OPEN_WAL) && (flags & SQLITE_OPEN_CREATE) && name != NULL) {
        if (access(name, F_OK) == 0) {
            int result = system_vfs->xOpen(system_vfs, name, file, flags & ~SQLITE_OPEN_CREATE, out_flags);
            // Gone in between (another program deleted it): created below, as SQLite would.
            if (result == SQLITE_OK) return result;
        }
        int result = system_vfs->xOpen(system_vfs, name, file, flags, out_flags);
        if (result == SQLITE_OK) sync_directory_of(name);
        return result;
    }
    return system_vfs->xOpen(system_vfs, name, file, flags, out_flags);
}

static void register_vfs(void) {
    system_vfs = sqlite3_vfs_find(NULL);
    if (system_vfs == NULL) return;
    keychain_vfs = *system_vfs;
    keychain_vfs.zName = "synckeychain";
    keychain_vfs.pNext = NULL;
    keychain_vfs.xOpen = keychain_open;
    registration_result = sqlite3_vfs_register(&keychain_vfs, 1);
}

int keychain_sqlite_register_vfs(void) {
    pthread_once(&registration, register_vfs);
    return registration_result;
}
