import Foundation
import LayerModels

/// Where the Server API serves what the app's backend made: its `Location`s and the URLs that
/// point the backend back at it.
enum ServerAPIPath {
    static func conversation(app: UUID, _ conversation: UUID) -> String {
        "/apps/\(app.lowercased)/conversations/\(conversation.lowercased)"
    }

    /// Where the backend refreshes rich content it opened for a conversation.
    static func content(app: UUID, conversation: UUID, _ content: UUID) -> String {
        "\(self.conversation(app: app, conversation))/content/\(content.lowercased)"
    }
}
