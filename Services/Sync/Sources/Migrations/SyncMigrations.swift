import LayerServer

/// The sync schema's migrations, in the order they apply. A change to the schema is a new
/// numbered file here and one more entry in this list; a released migration is never edited.
let syncMigrations = MigrationRunner(
    schema: "sync",
    migrations: [
        m0001CreateSyncSchema, m0002Push, m0003FormerParticipants, m0004ContentUploads, m0005ReplayedSignals, m0006Exports,
        m0007ScheduledMessages, m0008ParticipantCounts, m0009TagsByUser, m0010Following, m0011Channels,
        m0012ParticipantOrder, m0013UploadOrigins, m0014Webhooks,
        m0015WebhookDeliveries, m0016PushNotifications, m0017OutboxNotices, m0018ChunksOfApps, m0019Search, m0020ReceiptsSwitch,
    ])
