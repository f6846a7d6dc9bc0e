import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import PostgresNIO
import Testing

/// Races on the spend of a nonce, and how secrets are kept in the database.
@Suite struct ConcurrencyTests {
    @Test(arguments: [true, false]) func oneNonceOpensExactlyOneSession(sameUser: Bool) async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            let tokens = try (0..<50).map { index in
                try auth.app.signer.token(userID: sameUser ? "racer" : "racer-\(index)", nonce: nonce)
            }
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for token in tokens {
                    group.addTask { try await auth.createSession(token: token) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 50)
            #expect(responses.filter { $0.status == 201 }.count == 1)
            let refused = responses.filter { $0.status != 201 }
            #expect(refused.count == 49)
            #expect(
                refused.allSatisfy { $0.status == 422 && $0.errorReason == "eit_nonce_not_found" },
                "\(Set(refused.map { "\($0.status) \($0.errorReason ?? $0.text)" }))")

            #expect(try await auth.count("SELECT count(*) FROM auth.sessions WHERE app_id = \(auth.app.id)") == 1)
            // Only the winner's user was stored.
            #expect(try await auth.count("SELECT count(*) FROM auth.users WHERE app_id = \(auth.app.id)") == 1)
        }
    }

    @Test func concurrentNoncesAreDistinct() async throws {
        try await AuthFixture.run { auth in
            let nonces = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await auth.nonce() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(nonces.count == 20)
            #expect(Set(nonces).count == 20)
            for nonce in nonces {
                #expect(try await auth.count("SELECT count(*) FROM auth.nonces WHERE nonce = \(nonce)") == 1)
            }
        }
    }

    @Test func sessionTokensAreStoredOnlyAsHashes() async throws {
        try await AuthFixture.run { auth in
            let tokens = [try await auth.session(user: "hash-a"), try await auth.session(user: "hash-b")]
            for token in tokens {
                let raw = Data(token.utf8)
                let hash = Data(SHA256.hash(data: raw))
                #expect(try await auth.count("SELECT count(*) FROM auth.sessions WHERE token_hash = \(hash)") == 1)
                #expect(try await auth.count("SELECT count(*) FROM auth.sessions WHERE token_hash = \(raw)") == 0)
                #expect(try await auth.count("SELECT count(*) FROM auth.sessions WHERE position(\(raw) IN token_hash) > 0") == 0)
                // No column of any row, rendered as text, holds the token.
                #expect(try await auth.count("SELECT count(*) FROM auth.sessions s WHERE strpos(s::text, \(token)) > 0") == 0)
            }
        }
    }

    @Test func serverAPITokensAreStoredOnlyAsHashes() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let token = try await auth.serverAPIToken()
            let raw = Data(token.utf8)
            let hash = Data(SHA256.hash(data: raw))
            #expect(
                try await auth.count(
                    "SELECT count(*) FROM auth.app_tokens WHERE app_id = \(auth.app.id) AND token_hash = \(hash)") == 1)
            #expect(try await auth.count("SELECT count(*) FROM auth.app_tokens WHERE token_hash = \(raw)") == 0)
            #expect(try await auth.count("SELECT count(*) FROM auth.app_tokens WHERE position(\(raw) IN token_hash) > 0") == 0)
            #expect(try await auth.count("SELECT count(*) FROM auth.app_tokens t WHERE strpos(t::text, \(token)) > 0") == 0)
            // The hash is what authenticates: the token works.
            let user = try await auth.client.request(
                .GET, "/apps/\(auth.app.id.lowercased)/users/nobody", headers: [("Authorization", "Bearer \(token)")])
            #expect(user.status == 404)
        }
    }
}
