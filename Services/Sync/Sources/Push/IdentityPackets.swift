import Foundation
import LayerModels
import LayerServer

/// The `Identity` change packets (reference 5.4): `create` with the full identity (a follow
/// began, or the identity was made), `update` with the Layer-Patch operations of what changed
/// (fields, `presence.*`), `delete` with `data` null (unfollowed, or the identity deleted). They
/// are ephemeral, rendered once for every device that gets them; an `update` is said `patch` to
/// devices that speak 1.0, so it carries that rendering too.
enum IdentityPackets {
    static func reference(_ user: String, urls: URLBuilder) -> Packets.ObjectReference {
        Packets.ObjectReference(type: "Identity", id: LayerID.identity(userID: user), url: urls.identity(user))
    }

    static func create(_ identity: IdentityObject, urls: URLBuilder) -> EphemeralPacket {
        let change = Packets.change("create", reference(identity.basic.userID, urls: urls), identity)
        return EphemeralPacket(type: change.type, body: change.body, event: "identity")
    }

    static func delete(_ user: String, urls: URLBuilder) -> EphemeralPacket {
        let change = Packets.change("delete", reference(user, urls: urls), JSONValue.null)
        return EphemeralPacket(type: change.type, body: change.body, event: "identity")
    }

    /// An `update` of `user`'s identity; `event` is the SSE event name.
    static func update(_ user: String, _ patch: [Packets.PatchOperation], urls: URLBuilder, event: String) -> EphemeralPacket {
        let object = reference(user, urls: urls)
        // Whatever version the request that caused it speaks, every device gets its own.
        let change = APIVersion.$current.withValue(.v3_0) { Packets.change("update", object, patch) }
        let legacy = APIVersion.$current.withValue(.v1_0) { Packets.change("update", object, patch) }
        return EphemeralPacket(type: change.type, body: change.body, event: event, legacyBody: legacy.body)
    }

    /// The operations that take an identity from `before` to `after`: a `set` of each field that
    /// changed, and of each metadata key added or changed (`delete` of each removed), never of
    /// what stayed. Metadata whose changed keys hold a dot is set whole, since a dot would split
    /// the property path.
    static func patch(from before: IdentityRecord, to after: IdentityRecord) -> [Packets.PatchOperation] {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        var operations: [Packets.PatchOperation] = []
        for field in IdentityRules.textFields where before[keyPath: field.path] != after[keyPath: field.path] {
            operations.append(.set(field.property, text(after[keyPath: field.path])))
        }
        if before.identityType != after.identityType {
            operations.append(.set("identity_type", .string(after.identityType)))
        }
        let keys = Set(before.metadata.keys).union(after.metadata.keys).filter { before.metadata[$0] != after.metadata[$0] }
        if keys.contains(where: { $0.contains(".") }) {
            operations.append(.set("metadata", .object(after.metadata.mapValues(JSONValue.string))))
        } else {
            for key in keys.sorted() {
                if let value = after.metadata[key] {
                    operations.append(.set("metadata.\(key)", .string(value)))
                } else {
                    operations.append(Packets.PatchOperation(operation: "delete", property: "metadata.\(key)"))
                }
            }
        }
        return operations
    }
}
