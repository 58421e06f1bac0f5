import PostgresNIO

/// The PostgreSQL schema, as numbered migrations (see ``PostgresMigrator``). Never edit a shipped
/// migration: add the next one.
///
/// Concurrency design (docs/decisions/0048): every write to an account's items first locks that
/// account's `account_sequences` row, so batches of one account serialize, their sequence numbers
/// are gap-free and commit in sequence order; text IDs use the "C" collation, so ordering matches
/// `DeviceID`'s bytewise order.
enum PostgresSchema {
    static let migrations: [PostgresMigrator.Migration] = [
        .init(version: 1, statements: [
            """
            CREATE TABLE accounts (
                id uuid PRIMARY KEY,
                name text COLLATE "C" NOT NULL UNIQUE,
                verifier bytea NOT NULL,
                kdf_parameters bytea NOT NULL,
                salt bytea NOT NULL,
                wrapped_account_key bytea NOT NULL,
                wrapped_recovery_key bytea,
                created_at timestamptz NOT NULL
            )
            """,
            // The per-account counter row: the lock that serializes an account's writes.
            """
            CREATE TABLE account_sequences (
                account_id uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                last_sequence bigint NOT NULL DEFAULT 0,
                item_count bigint NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE devices (
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                device_id text COLLATE "C" NOT NULL,
                name text NOT NULL,
                token_hash bytea NOT NULL,
                created_at timestamptz NOT NULL,
                last_seen_at timestamptz NOT NULL,
                revoked_at timestamptz,
                PRIMARY KEY (account_id, device_id)
            )
            """,
            "CREATE UNIQUE INDEX devices_token_hash ON devices (token_hash)",
            // One row per item: the sequence of its latest change, what the change feed pages by.
            """
            CREATE TABLE items (
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                zone text COLLATE "C" NOT NULL,
                item_id text COLLATE "C" NOT NULL,
                sequence bigint NOT NULL,
                PRIMARY KEY (account_id, zone, item_id)
            )
            """,
            "CREATE UNIQUE INDEX items_change_feed ON items (account_id, zone, sequence)",
            // An item's current versions (siblings), each with the sequence of the write that stored it.
            """
            CREATE TABLE item_versions (
                account_id uuid NOT NULL,
                zone text COLLATE "C" NOT NULL,
                item_id text COLLATE "C" NOT NULL,
                sequence bigint NOT NULL,
                vector bytea NOT NULL,
                deleted boolean NOT NULL,
                blob bytea NOT NULL,
                PRIMARY KEY (account_id, zone, item_id, sequence),
                FOREIGN KEY (account_id, zone, item_id) REFERENCES items ON DELETE CASCADE
            )
            """,
            // Finds the accounts with tombstones for garbage collection without scanning every version.
            "CREATE INDEX item_versions_tombstones ON item_versions (account_id) WHERE deleted",
            // The highest sequence of a collected tombstone: older cursors can no longer be served.
            """
            CREATE TABLE zone_horizons (
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                zone text COLLATE "C" NOT NULL,
                horizon bigint NOT NULL,
                PRIMARY KEY (account_id, zone)
            )
            """,
            """
            CREATE TABLE acknowledgements (
                account_id uuid NOT NULL,
                device_id text COLLATE "C" NOT NULL,
                zone text COLLATE "C" NOT NULL,
                sequence bigint NOT NULL,
                PRIMARY KEY (account_id, device_id, zone),
                FOREIGN KEY (account_id, device_id) REFERENCES devices ON DELETE CASCADE
            )
            """,
        ]),
        // The one secret every process shares (decision 0065): a single row, inserted by the first
        // process that needs it.
        .init(version: 2, statements: [
            """
            CREATE TABLE server_secret (
                id smallint PRIMARY KEY CHECK (id = 1),
                secret bytea NOT NULL CHECK (octet_length(secret) = 32)
            )
            """,
        ]),
        // The foreign key from item_versions to items made every inserted version check its item
        // through a plan cached while the tables were small: one that scanned all of the account's
        // items (items_change_feed, filtering on item_id), so uploads slowed as accounts grew
        // (5,400 → 540 items/s). Uploads and garbage collection keep the two tables consistent in
        // one transaction under the account's row lock; collection deletes versions explicitly.
        .init(version: 3, statements: [
            "ALTER TABLE item_versions DROP CONSTRAINT IF EXISTS item_versions_account_id_zone_item_id_fkey",
        ]),
        // The one batch rule (decision 0100): the account's byte usage, counted incrementally; per
        // device and zone, `must_resync` and the last batch's answer.
        .init(version: 4, statements: [
            "ALTER TABLE account_sequences ADD COLUMN stored_bytes bigint NOT NULL DEFAULT 0",
            """
            UPDATE account_sequences s SET stored_bytes = coalesce(
                (SELECT sum(octet_length(blob)) FROM item_versions v WHERE v.account_id = s.account_id), 0)
            """,
            "ALTER TABLE acknowledgements ADD COLUMN must_resync boolean NOT NULL DEFAULT false",
            "ALTER TABLE acknowledgements ADD COLUMN last_batch bigint",
            "ALTER TABLE acknowledgements ADD COLUMN last_answer bytea",
        ]),
        // The authenticated account state (decision 0120): the device log and each device's latest
        // statement per zone, opaque to the server.
        .init(version: 5, statements: [
            """
            CREATE TABLE device_log (
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                position integer NOT NULL,
                entry bytea NOT NULL,
                created_at timestamptz NOT NULL,
                PRIMARY KEY (account_id, position)
            )
            """,
            """
            CREATE TABLE zone_statements (
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                zone text COLLATE "C" NOT NULL,
                device_id text COLLATE "C" NOT NULL,
                statement bytea NOT NULL,
                published_at timestamptz NOT NULL,
                PRIMARY KEY (account_id, zone, device_id)
            )
            """,
        ]),
        // An operator's disabled flag on an account (decision 0152).
        .init(version: 6, statements: [
            "ALTER TABLE accounts ADD COLUMN disabled_at timestamptz",
        ]),
        // The recovery key's verifier (decision 0132).
        .init(version: 7, statements: [
            "ALTER TABLE accounts ADD COLUMN recovery_verifier bytea",
        ]),
        // Approval requests (decision 0133): opaque requests and sealed answers, kept ten minutes.
        .init(version: 8, statements: [
            """
            CREATE TABLE approval_requests (
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                id text COLLATE "C" NOT NULL,
                device_id text COLLATE "C" NOT NULL,
                request bytea NOT NULL,
                response bytea,
                created_at timestamptz NOT NULL,
                PRIMARY KEY (account_id, id)
            )
            """,
        ]),
        // Where the last restore's backup ended (decision 0154); NULL for an account never restored.
        .init(version: 9, statements: [
            "ALTER TABLE account_sequences ADD COLUMN restored_through bigint",
        ]),
        // When the zone's tombstones were last collected (decision 0175); NULL: never.
        .init(version: 10, statements: [
            "ALTER TABLE zone_horizons ADD COLUMN collected_at timestamptz",
        ]),
        // The tombstones a collection removes, kept as the evidence of a deletion that a device back
        // past the horizon asks for (rule R10a of docs/sync-rules.md): the latest per item, listed
        // only in full resyncs that ask, for items `items` no longer holds.
        .init(version: 11, statements: [
            """
            CREATE TABLE collected_deletions (
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                zone text COLLATE "C" NOT NULL,
                item_id text COLLATE "C" NOT NULL,
                item_sequence bigint NOT NULL,
                sequence bigint NOT NULL,
                vector bytea NOT NULL,
                deleted boolean NOT NULL,
                blob bytea NOT NULL,
                PRIMARY KEY (account_id, zone, item_id, sequence)
            )
            """,
            "CREATE INDEX collected_deletions_feed ON collected_deletions (account_id, zone, item_sequence)",
            // When the zone last dropped a deletion without keeping it: every collection before did.
            "ALTER TABLE zone_horizons ADD COLUMN forgotten_at timestamptz",
            "UPDATE zone_horizons SET forgotten_at = collected_at",
        ]),
        // The two parts of an approval made in turn (decision 0271).
        .init(version: 12, statements: [
            "ALTER TABLE approval_requests ADD COLUMN offer bytea",
            "ALTER TABLE approval_requests ADD COLUMN reveal bytea",
        ]),
        // The accounts' identity cards (decision 0282), opaque to the server.
        .init(version: 13, statements: [
            """
            CREATE TABLE identity_cards (
                account_id uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                card bytea NOT NULL,
                published_at timestamptz NOT NULL
            )
            """,
        ]),
        // Shared groups' membership logs and member accounts (decision 0283), the entries opaque.
        // The group's row serializes appends.
        .init(version: 14, statements: [
            "CREATE TABLE groups (group_id text PRIMARY KEY, created_at timestamptz NOT NULL)",
            """
            CREATE TABLE group_log (
                group_id text NOT NULL REFERENCES groups (group_id) ON DELETE CASCADE,
                position integer NOT NULL,
                entry bytea NOT NULL,
                created_at timestamptz NOT NULL,
                PRIMARY KEY (group_id, position)
            )
            """,
            """
            CREATE TABLE group_members (
                group_id text NOT NULL REFERENCES groups (group_id) ON DELETE CASCADE,
                account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                is_current boolean NOT NULL,
                PRIMARY KEY (group_id, account_id)
            )
            """,
            "CREATE INDEX group_members_by_account ON group_members (account_id, is_current)",
        ]),
        // No batch memory (decision 0289): the last batch's number and answer go.
        .init(version: 15, statements: [
            "ALTER TABLE acknowledgements DROP COLUMN last_batch",
            "ALTER TABLE acknowledgements DROP COLUMN last_answer",
        ]),
        // Members that only read (decision 0290).
        .init(version: 16, statements: [
            "ALTER TABLE group_members ADD COLUMN is_viewer boolean NOT NULL DEFAULT false",
        ]),
    ]
}