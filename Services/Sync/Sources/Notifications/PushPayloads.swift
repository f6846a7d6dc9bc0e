import Foundation
import LayerModels
import LayerServer

/// What one device is told: the alert of the send's `notification` as its recipient sees it, the
/// badge, and the `layer` data naming what happened, rendered for APNs or FCM.
struct PushContent: Sendable {
    /// The `notification` object of the send, announcement or `POST /notifications`.
    var notification: JSONValue?
    var recipient: String
    var badge: Int?
    /// `conversation_identifier` and `message_identifier` (or `announcement_identifier`).
    var layer: [String: String]
    /// Pushes with the same id replace one another on the device (a message retried stays one).
    var collapseID: String?
    /// Groups a conversation's notifications on the device.
    var threadID: String?

    /// The largest payload APNs and FCM take.
    static let maxBytes = 4096

    /// The alert fields of `notification` for `recipient`: the root's `title`, `text` and `sound`,
    /// replaced by those of the recipient's entry in `recipients` (an array of
    /// `{"recipient": identity or "user_id", …}`, or the 1.x object keyed by user id).
    var fields: [String: JSONValue] {
        guard case .object(var fields)? = notification else { return [:] }
        let override: JSONValue? =
            switch fields["recipients"] {
            case .array(let entries)?:
                entries.first { entry in
                    let named = entry["recipient"]?.stringValue ?? entry["user_id"]?.stringValue
                    return named.map { Self.userID(named: $0) } == recipient
                }
            case .object(let byUser)?: byUser[recipient]
            default: nil
            }
        fields["recipients"] = nil
        if case .object(let replaced)? = override {
            for key in ["title", "text", "sound"] where replaced[key] != nil { fields[key] = replaced[key] }
        }
        return fields
    }

    /// A user id from an identity URI (`layer:///identities/<id>`) or a bare id.
    static func userID(named text: String) -> String {
        let prefix = "layer:///identities/"
        guard text.hasPrefix(prefix) else { return text }
        let id = String(text.dropFirst(prefix.count))
        return id.removingPercentEncoding ?? id
    }

    /// Whether anything is shown: a title, a text or a localised one. Without, the push is silent.
    static func isAlert(_ fields: [String: JSONValue]) -> Bool {
        ["title", "text", "loc-key", "title-loc-key"].contains { fields[$0]?.stringValue.map { !$0.isEmpty } ?? false }
    }

    func render(_ provider: PushProvider, token: String, topic: String) -> RenderedPush {
        var fields = fields
        var push = provider == .apns ? apns(fields, token: token, topic: topic) : fcm(fields, token: token)
        // Too large: the text is shortened until it fits, then the app's data is left out.
        while push.body.utf8.count > Self.maxBytes {
            if let text = fields["text"]?.stringValue, text.count > 16 {
                fields["text"] = .string(String(text.prefix(text.count * 3 / 4)) + "…")
            } else if fields["data"] != nil {
                fields["data"] = nil
            } else {
                break
            }
            push = provider == .apns ? apns(fields, token: token, topic: topic) : fcm(fields, token: token)
        }
        return push
    }

    /// `{"aps": {…}, "layer": {…}, "data": {…}}` with the `apns-*` headers.
    private func apns(_ fields: [String: JSONValue], token: String, topic: String) -> RenderedPush {
        var aps: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        let names = [
            ("title", "title"), ("text", "body"), ("title-loc-key", "title-loc-key"), ("title-loc-args", "title-loc-args"),
            ("loc-key", "loc-key"), ("loc-args", "loc-args"), ("action-loc-key", "action-loc-key"),
        ]
        for (ours, apple) in names { if let value = fields[ours], value != .null { alert[apple] = value } }
        if let image = fields["apns"]?["launch-image"] { alert["launch-image"] = image }
        let isAlert = Self.isAlert(fields)
        if isAlert { aps["alert"] = .object(alert) }
        if let sound = fields["sound"], sound != .null { aps["sound"] = sound }
        if let category = fields["category"]?.stringValue, !category.isEmpty { aps["category"] = .string(category) }
        if let badge { aps["badge"] = .number(Double(badge)) }
        if let threadID { aps["thread-id"] = .string(threadID) }
        if !isAlert { aps["content-available"] = 1 }
        var payload: [String: JSONValue] = ["aps": .object(aps), "layer": .object(layer.mapValues(JSONValue.string))]
        if let data = fields["data"], case .object = data { payload["data"] = data }
        var headers = [
            "apns-topic": topic, "apns-push-type": isAlert ? "alert" : "background",
            // Background pushes must go at priority 5; alerts go at once.
            "apns-priority": isAlert ? "10" : "5",
            "apns-expiration": String(Int(Date().timeIntervalSince1970) + 86400),
        ]
        if let collapseID { headers["apns-collapse-id"] = collapseID }
        return RenderedPush(provider: .apns, token: token, headers: headers, body: JSONValue.object(payload).jsonText)
    }

    /// `{"message": {"token", "notification"?, "data", "android"}}`: FCM's data values are strings.
    private func fcm(_ fields: [String: JSONValue], token: String) -> RenderedPush {
        var message: [String: JSONValue] = ["token": .string(token)]
        let isAlert = Self.isAlert(fields)
        var shown: [String: JSONValue] = [:]
        if let title = fields["title"]?.stringValue { shown["title"] = .string(title) }
        if let text = fields["text"]?.stringValue { shown["body"] = .string(text) }
        if isAlert, !shown.isEmpty { message["notification"] = .object(shown) }
        var data: [String: JSONValue] = [:]
        if case .object(let custom)? = fields["data"] {
            for (key, value) in custom where !Self.reservedDataKey(key) {
                data[key] = .string(value.stringValue ?? value.jsonText)
            }
        }
        data["layer"] = .string(JSONValue.object(layer.mapValues(JSONValue.string)).jsonText)
        if let badge { data["badge"] = .string(String(badge)) }
        message["data"] = .object(data)
        var android: [String: JSONValue] = ["priority": isAlert ? "high" : "normal", "ttl": "86400s"]
        if let collapseID { android["collapse_key"] = .string(collapseID) }
        if isAlert {
            var notification: [String: JSONValue] = [:]
            let names = [
                ("sound", "sound"), ("title-loc-key", "title_loc_key"), ("title-loc-args", "title_loc_args"),
                ("loc-key", "body_loc_key"), ("loc-args", "body_loc_args"),
            ]
            for (ours, google) in names { if let value = fields[ours], value != .null { notification[google] = value } }
            if let threadID { notification["tag"] = .string(threadID) }
            if !notification.isEmpty { android["notification"] = .object(notification) }
        }
        message["android"] = .object(android)
        return RenderedPush(
            provider: .fcm, token: token, headers: [:], body: JSONValue.object(["message": .object(message)]).jsonText)
    }

    /// Keys FCM keeps for itself in `data`.
    static func reservedDataKey(_ key: String) -> Bool {
        ["from", "gcm", "notification", "message_type", "collapse_key", "layer", "badge"].contains(key)
            || key.hasPrefix("google")
    }
}
