import LayerServer

/// The receipts switch of the sync guide ("for conversations with more than 5 participants, you
/// should disable delivery and read receipts"): a conversation created with
/// `"receipts_enabled": false` keeps each participant's own read state, and shows nobody the
/// others'.
let m0020ReceiptsSwitch = Migration(
    20, "receipts_switch",
    ["ALTER TABLE sync.conversations ADD COLUMN receipts_enabled boolean NOT NULL DEFAULT true"])
