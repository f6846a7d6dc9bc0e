import Foundation
import LayerServer
import LayerTesting
import PostgresNIO
import Testing

/// What distributing the database by app (docs/scale.md) rests on, read from PostgreSQL's
/// catalog after `layer migrate`: every table that holds an app's data names the app, and which
/// keys must still take it in before the tables can be distributed.
@Suite("App data: every table names its app")
struct AppDataTests {
    /// The tables that hold no one app's data, and why. Distributed, they are reference tables
    /// (copied to every node) or stay on the coordinator.
    static let global: Set<String> = [
        "auth.apps",  // the apps themselves: their `id` is every other table's app_id
        "auth.certificates",  // issued to a device before it signs in to any app; a session names one
        "auth.device_ca",  // the suite's one device CA
        "auth.nonces",  // asked for before the app is known; spent by the session that names it
        "sync.replicas",  // the running sync processes
        "auth.schema_migrations", "sync.schema_migrations", "names.schema_migrations", "voip.schema_migrations",
    ]

    /// Unique keys of app tables without `app_id`. Citus needs the distribution column in every
    /// unique key; each of these becomes (app_id, …) in the migration that distributes the tables
    /// (docs/scale.md, "What changes"). A new key must include `app_id` from the start.
    static let keysToWiden: Set<String> = [
        "auth.app_tokens (id)", "auth.app_tokens (token_hash)", "auth.keys (id)", "auth.providers (id)",
        "auth.sessions (id)", "auth.sessions (token_hash)", "names.entries (seq)",
        "sync.announcement_recipients (announcement_id, user_id)", "sync.announcements (id)",
        "sync.channel_members (channel_id, user_id)", "sync.channels (id)", "sync.content (id)",
        "sync.content_chunks (content_id, ordinal)", "sync.conversations (id)", "sync.devices (replica_id, id)",
        "sync.export_chunks (export_id, ordinal)", "sync.exports (id)", "sync.message_content (content_id, message_id)",
        "sync.message_tags (message_id, user_id)", "sync.messages (channel_id, \"position\")",
        "sync.messages (conversation_id, \"position\")", "sync.messages (id)", "sync.metadata_changes (id)",
        "sync.participant_changes (id)", "sync.participants (conversation_id, user_id)", "sync.push_failures (id)",
        "sync.push_jobs (id)", "sync.receipts (message_id, user_id)", "sync.scheduled_messages (id)",
        "sync.webhook_deliveries (id)", "sync.webhooks (id)",
    ]

    @Test("Every table of the four schemas has a NOT NULL app_id, but the listed global ones")
    func everyTableNamesItsApp() async throws {
        try await withMigratedDatabase { postgres in
            let rows = try await postgres.query(
                """
                SELECT t.table_schema || '.' || t.table_name, c.is_nullable
                FROM information_schema.tables t
                LEFT JOIN information_schema.columns c ON c.table_schema = t.table_schema
                    AND c.table_name = t.table_name AND c.column_name = 'app_id'
                WHERE t.table_schema IN ('auth', 'sync', 'names', 'voip') AND t.table_type = 'BASE TABLE'
                """, logger: .test)
            var withoutApp = Set<String>()
            var tables = 0
            for try await (table, nullable) in rows.decode((String, String?).self) {
                tables += 1
                if let nullable {
                    #expect(nullable == "NO", "\(table).app_id may be NULL")
                } else {
                    withoutApp.insert(table)
                }
            }
            #expect(tables > 60, "the schemas were not migrated: \(tables) tables")
            #expect(withoutApp.subtracting(Self.global).sorted() == [], "tables of app data without app_id")
            #expect(Self.global.subtracting(withoutApp).sorted() == [], "listed as global, but they name an app now")
        }
    }

    @Test("Unique keys of app tables include app_id, but those listed to widen when distributing")
    func uniqueKeysIncludeTheApp() async throws {
        try await withMigratedDatabase { postgres in
            let rows = try await postgres.query(
                """
                SELECT n.nspname || '.' || c.relname || ' ('
                    || (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.ord)
                        FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum) || ')'
                FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname IN ('auth', 'sync', 'names', 'voip') AND i.indisunique
                  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'app_id')
                  AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                                  WHERE a.attrelid = c.oid AND a.attname = 'app_id' AND a.attnum = ANY(i.indkey))
                """, logger: .test)
            var keys = Set<String>()
            for try await key in rows.decode(String.self) { keys.insert(key) }
            #expect(keys.subtracting(Self.keysToWiden).sorted() == [], "new unique keys without app_id")
            #expect(Self.keysToWiden.subtracting(keys).sorted() == [], "listed, but they include app_id (or are gone) now")
        }
    }

    /// A database of its own, migrated by `layer migrate` as an operator does it.
    private func withMigratedDatabase(_ body: (PostgresClient) async throws -> Void) async throws {
        let database = try await TestDatabase.isolated()
        let child = try ChildProcess(
            try ChildProcess.builtProduct("layer"), ["migrate"], environment: ["LAYER_DATABASE_URL": database.url])
        #expect(try await child.wait(timeout: .seconds(60)) == 0, "\(child.output)")
        let postgres = database.makeClient(logger: .test)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await postgres.run() }
            try await body(postgres)
            group.cancelAll()
        }
    }
}
