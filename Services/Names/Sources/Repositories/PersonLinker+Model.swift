import Foundation
import Logging
import NameMatching
import PostgresNIO

extension PersonLinker {
    /// An app's store is first matched with the standard model; from this many persons on, with a
    /// model estimated on the store itself.
    static let estimationMinimum = 1_000
    /// Persons of the store the model is estimated on, with all of their candidates.
    static let estimationSample = 5_000

    /// The model an app's matches are scored with, for a store of `stored` persons. Once the store
    /// holds ``estimationMinimum`` persons, and again each time it has doubled since, the model is
    /// estimated anew by EM on a sample of the store (``MatchModel/estimated(sample:others:storeSize:)``):
    /// how often each field agrees among one person's records and among different people, how
    /// common duplicates are, and how much a shared home says when the names could be relatives'
    /// differ from one app's records to another's. Probabilities are for the store as it is: the
    /// more persons, the likelier that two records alike are namesakes (the prior follows the
    /// number of records).
    func model(app: UUID, stored: Int, _ connection: PostgresConnection, _ logger: Logger) async throws -> MatchModel {
        let saved = try await ModelRepository.model(app: app, connection, logger)
        var model = saved?.model ?? deduplicator.model
        if stored >= Self.estimationMinimum, stored >= 2 * (saved?.persons ?? 0) {
            model = try await estimate(app: app, stored: stored, connection, logger)
            try await ModelRepository.save(app: app, model: model, persons: stored, connection, logger)
        }
        return model.scaled(toRecords: max(stored, deduplicator.model.recordCount))
    }

    /// The model estimated on a sample of the app's persons and every stored person that shares a
    /// blocking key with one of them, starting from the standard model.
    private func estimate(app: UUID, stored: Int, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> MatchModel
    {
        let started = ContinuousClock.now
        let sample = try await ModelRepository.sample(app: app, limit: Self.estimationSample, connection, logger)
        let features = try sample.map { try decodedFeatures($0.features) }
        let keys = Array(Set(features.flatMap(\.estimationBlockingKeys)))
        let others = try await candidates(app: app, keys: keys, excluding: Set(sample.map(\.id)), connection, logger)
        let read = ContinuousClock.now
        let model = deduplicator.model.estimated(sample: features, others: others.features, storeSize: stored)
        logger.debug(
            "estimated the app's match model",
            metadata: [
                "app": "\(app)", "persons": "\(stored)", "candidates": "\(others.ids.count)", "prior": "\(model.prior)",
                "read": "\(read - started)", "estimated": "\(ContinuousClock.now - read)",
            ])
        return model
    }
}
