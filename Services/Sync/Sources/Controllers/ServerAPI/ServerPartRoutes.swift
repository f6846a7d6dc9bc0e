import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Updatable message parts (API 3.0) under `/apps/:app/conversations/:c/messages/:m/parts`: list
/// and read them, add one (201), replace one or all (200, with what is there after), delete one
/// (204). Every change reaches the changelogs and devices of those who hold the message, and the
/// app's `MessagePart.*` webhooks.
extension ServerAPIController {
    static let partKeys: Set<String> = ["id", "mime_type", "body", "encoding", "content"]

    private struct Target {
        var conversation: UUID
        var message: UUID
    }

    private func target(_ context: LayerRequestContext) throws -> Target {
        Target(
            conversation: try context.parameters.layerID("conversation", as: .conversations).uuid,
            message: try context.parameters.layerID("message", as: .messages).uuid)
    }

    /// The part of the path: its UUID or its full id; anything else is not found.
    private func partID(_ context: LayerRequestContext, of message: UUID) throws -> UUID {
        let text = context.parameters.decoded("part")
        guard let id = try? PartRules.partID(text, messageID: message, property: "part") else {
            throw APIError.notFound("The part '\(text)'")
        }
        return id
    }

    @Sendable func listParts(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let target = try target(context)
        return try Response.json(try await domain.messages.message(target.message, in: target.conversation, scope).parts)
    }

    @Sendable func getPart(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let target = try target(context)
        let part = try partID(context, of: target.message)
        let message = try await domain.messages.message(target.message, in: target.conversation, scope)
        guard let found = message.parts.first(where: { $0.uuid == part }) else { throw APIError.notFound("The part") }
        return try Response.json(found)
    }

    @Sendable func addPart(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let target = try target(context)
        let input = try await request.decodeJSON(PartInput.self, limit: 16 * 1024, allowedKeys: Self.partKeys)
        // The app's chosen id, or a new one.
        let part = try PartRules.partID(input.id, messageID: target.message, property: "id")
        let message = try await domain.messages.changeParts(
            .add(part, input), of: target.message, in: target.conversation, scope)
        return try Response.json(message.parts.first { $0.uuid == part }, status: .created)
    }

    @Sendable func replacePart(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let target = try target(context)
        let part = try partID(context, of: target.message)
        let input = try await request.decodeJSON(PartInput.self, limit: 16 * 1024, allowedKeys: Self.partKeys)
        let message = try await domain.messages.changeParts(
            .replace(part, input), of: target.message, in: target.conversation, scope)
        return try Response.json(message.parts.first { $0.uuid == part })
    }

    /// `PUT …/parts` with the new parts as an array, or as `{"parts": […]}`.
    @Sendable func replaceParts(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let target = try target(context)
        let body = try await request.jsonBody(limit: 256 * 1024)
        let inputs: [PartInput]?
        if body.readableBytesView.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[") {
            inputs = try Request.decodeJSON([PartInput].self, from: body)
        } else {
            inputs = try Request.decodeJSON(PartsBody.self, from: body, allowedKeys: ["parts"]).parts
        }
        let message = try await domain.messages.changeParts(
            .replaceAll(inputs), of: target.message, in: target.conversation, scope)
        return try Response.json(message.parts)
    }

    @Sendable func deletePart(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let target = try target(context)
        let part = try partID(context, of: target.message)
        _ = try await domain.messages.changeParts(.delete(part), of: target.message, in: target.conversation, scope)
        return Response(status: .noContent)
    }

    private struct PartsBody: Decodable {
        var parts: [PartInput]?
    }
}
