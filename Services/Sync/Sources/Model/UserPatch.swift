import Foundation
import LayerModels
import LayerServer

/// A change to one user's blocks: `add` blocks the users named, `remove` lifts their blocks,
/// `set` makes them the whole list.
struct BlockChange: Sendable, Equatable {
    enum Kind: String, Sendable { case add, remove, set }
    var operation: Kind
    var userIDs: [String]

    init(_ operation: Kind, _ userIDs: [String]) {
        self.operation = operation
        self.userIDs = userIDs
    }
}

/// What a Server API `PATCH /apps/<app>/users/<user>` asks, every operation checked before
/// anything changes (a bad one is a 4xx naming it, `<index>.<key>`):
/// - `{"operation": "set", "property": "suspended", "value": true|false}`;
/// - `{"operation": "add"|"remove", "property": "blocks", "id": "layer:///identities/<user>"}`
///   (2.0 and later) or with `"value": "<user id>"` (1.0);
/// - `{"operation": "set", "property": "blocks", "value": []}` lifts every block (1.x also set a
///   list of user ids, which replaces the list).
/// A block of the user themselves changes nothing.
struct UserPatch {
    var suspended: Bool?
    /// The block operations, consecutive ones of a kind together.
    var blocks: [BlockChange] = []
    /// Every operation named the user themselves in an `add` or `remove` of `blocks`.
    var onlyBlocksOfThemselves: Bool
    /// The most users one user may block.
    static let maxBlocks = BlockRepository.maxBlocks

    init(_ operations: [LayerPatchOperation], user: String) throws {
        var ofThemselves = 0
        for (index, operation) in operations.enumerated() {
            switch operation.property {
            case "suspended":
                guard operation.operation == .set, case .bool(let value)? = operation.value else {
                    throw APIError.invalid("\(index).value", "'suspended' takes a set operation with a boolean value.")
                }
                suspended = value
            case "blocks":
                let change = try Self.blockChange(operation, index: index)
                let others = change.userIDs.filter { $0 != user }
                if change.operation != .set && others.isEmpty {
                    ofThemselves += 1
                    continue
                }
                if let last = blocks.last, last.operation == change.operation, change.operation != .set {
                    blocks[blocks.count - 1].userIDs += others
                } else {
                    blocks.append(.init(change.operation, others))
                }
            default:
                throw APIError.invalid(
                    "\(index).property", "Only 'suspended' and 'blocks' can be patched here, not '\(operation.property)'.")
            }
        }
        onlyBlocksOfThemselves = !operations.isEmpty && ofThemselves == operations.count
    }

    private static func blockChange(_ operation: LayerPatchOperation, index: Int) throws -> BlockChange {
        switch operation.operation {
        case .add, .remove:
            let kind: BlockChange.Kind = operation.operation == .add ? .add : .remove
            switch (operation.id, operation.value) {
            case (let id?, nil):
                return .init(kind, [try IdentityReference.userID(id, property: "\(index).id")])
            case (nil, .string(let text)?):
                return .init(kind, [try IdentityReference.userID(text, property: "\(index).value")])
            case (nil, nil):
                throw APIError(
                    .missingProperty, "Name the user to \(kind.rawValue) by id (layer:///identities/<user>) or value.",
                    property: "\(index).id")
            case (nil, _?):
                throw APIError.invalid("\(index).value", "The value of a block is a user id.")
            case (_?, _?):
                throw APIError.invalid("\(index).id", "Name the user by id or by value, not both.")
            }
        case .set:
            guard operation.id == nil, case .array(let items)? = operation.value else {
                throw APIError.invalid(
                    "\(index).value", "Setting 'blocks' takes an array of user ids: [] lifts every block.")
            }
            guard items.count <= maxBlocks else {
                throw APIError.invalid("\(index).value", "A user can block at most \(maxBlocks) users.")
            }
            return .init(
                .set,
                try items.enumerated().map { position, item in
                    let property = "\(index).value.\(position)"
                    guard case .string(let text) = item else { throw APIError.invalid(property, "A block is a user id.") }
                    return try IdentityReference.userID(text, property: property)
                })
        case .delete:
            throw APIError.invalid("\(index).operation", "'blocks' takes add, remove and set operations.")
        }
    }
}
