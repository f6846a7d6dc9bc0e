import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerTesting
import NIOCore
import PostgresNIO
import Testing

/// What one caller can make the service do is bounded: sizes, rates and the work of one request
/// (issue 25, findings 3, 4, 5 and 8).
@Suite struct BoundsTests {
    /// Finding 3: one user's import that would grow one person past its limits is refused at
    /// once, and another user's write meanwhile does not wait for it.
    @Test func anImportThatWouldGrowAPersonBeyondItsLimitsIsRefusedQuickly() async throws {
        try await NamesHarness.run { names in
            let mallory = try await names.user("mallory")
            let bob = try await names.user("bob")
            // 1,000 records of 85 addresses, under the 4 MiB a user may send.
            let records: [JSONValue] = (0..<1000).map { record in
                let emails: [JSONValue] = (0..<84).map { ["type": "email", "value": .string("m\(record)x\($0)@ex.co")] }
                return [
                    "last_name": .string("Lory \(record)"),
                    "addresses": .array([["type": "system", "value": "mallory"]] + emails),
                ]
            }
            let clock = ContinuousClock()
            async let big = mallory.post("/persons", ["persons": .array(records)])
            try await Task.sleep(for: .milliseconds(300))
            let start = clock.now
            let small = try await bob.post("/persons", ["persons": [person("Bob", "Small", [("system", "bob")])]])
            let waited = clock.now - start
            #expect(small.status == 201, "\(small.text)")
            #expect(waited < .seconds(20), "the other user's write waited \(waited)")
            let refused = try await big
            #expect(refused.status == 422, "\(refused.status) \(refused.text.prefix(300))")
            #expect(refused.json?["data"]?["limit"]?.intValue == 500, "\(refused.text.prefix(300))")
            #expect(refused.errorProperty?.hasPrefix("persons[") == true, "\(refused.text.prefix(300))")
            #expect(try await mallory.resolve("email:m0x0@ex.co").status == 404, "nothing was stored")
        }
    }

    /// Finding 8: an address value too long for the index is a 422 naming it, not a 500; so is a
    /// device larger than a device is.
    @Test func anAddressValueOverTheLimitIsRefused() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            // Random letters: a run of one letter compresses small enough to fit the index anyway.
            let long = String((0..<6000).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
            for (type, value) in [("twitter", long), ("email", long + "@example.com"), ("system", long), ("physical", long)] {
                let response = try await server.post("/persons", ["persons": [person("Ann", nil, [(type, value)])]])
                #expect(response.status == 422, "\(type): \(response.status)")
                #expect(
                    response.json?["data"]?["errors"]?[0]?["property"] == "addresses[0].value", "\(response.text.prefix(300))")
            }
            let device: JSONValue = ["first_name": "Ann", "devices": [["model": .string(long)]]]
            let large = try await server.post("/persons", ["persons": [device]])
            #expect(large.status == 422 && large.json?["data"]?["errors"]?[0]?["property"] == "devices[0]", "\(large.status)")
            let resolve = try await server.get("/resolve?address=twitter:\(long)")
            #expect(resolve.status == 422 && resolve.errorProperty == "address", "\(resolve.status)")
        }
    }

    /// Finding 8: routing answers alike whether the person bars the app or nobody has the address.
    @Test func routingDoesNotRevealWhichAppsAPersonBars() async throws {
        try await NamesHarness.run { names in
            let (id, ada, bob) = try await PolicyTests.adaClaimed(names)
            let barredApp = LayerID(.apps, UUID()).uri
            let otherApp = LayerID(.apps, UUID()).uri
            #expect(try await ada.patch("/persons/\(bareUUID(id))", ["barred_apps": [.string(barredApp)]]).status == 200)
            let barred = try await bob.post("/route", ["address": "email:ada@example.com", "app_id": .string(barredApp)])
            let other = try await bob.post("/route", ["address": "email:ada@example.com", "app_id": .string(otherApp)])
            let nobody = try await bob.post("/route", ["address": "email:nobody@example.com", "app_id": .string(otherApp)])
            #expect(barred.status == 404, "\(barred.text)")
            #expect(barred.json?["message"] == other.json?["message"] && other.json?["message"] == nobody.json?["message"])
        }
    }

    /// Finding 4: an import's body is read only once the caller is known: a request without
    /// credentials is answered before its body arrives, and a user's import is cut at 4 MB
    /// (only the app's backend may send 32 MB).
    @Test func importBodiesAreReadOnlyAfterTheCallerIsKnown() async throws {
        try await NamesHarness.run { names in
            let port = names.fixture.server.port
            func head(_ path: String, authorization: String?, length: Int) -> String {
                "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: \(MediaType.layerJSON)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(length)\r\n"
                    + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n"
            }
            let anonymous = try await RawHTTP.exchange(
                port: port, head("/persons", authorization: nil, length: 20_000_000), timeout: .seconds(10))
            #expect(anonymous.hasPrefix("HTTP/1.1 401"), "\(anonymous.prefix(200))")
            let app = try await RawHTTP.exchange(
                port: port, head("/apps/\(names.appID)/persons", authorization: "Bearer wrong", length: 20_000_000),
                timeout: .seconds(10))
            #expect(app.hasPrefix("HTTP/1.1 401"), "\(app.prefix(200))")

            let token = try await names.fixture.session(user: "bulk")
            let user = try await RawHTTP.exchange(
                port: port,
                head("/persons", authorization: "Layer session-token=\"\(token)\"", length: 20_000_000)
                    + String(repeating: " ", count: 4 * 1024 * 1024 + 1),
                timeout: .seconds(10))
            #expect(user.hasPrefix("HTTP/1.1 413"), "\(user.prefix(200))")
        }
    }

    /// Finding 8: finding the duplicates of an address book reads the store a bounded number of
    /// times, not once per contact.
    @Test func bookDuplicatesReadTheStoreInFewQueries() async throws {
        let database = try await TestDatabase.isolated()
        try await NamesHarness.run(database: database) { names in
            let user = try await names.user("dana")
            let contacts: [JSONValue] = (0..<400).map {
                person(
                    "Contact", "N\($0)", [("phone", "+1415555\(String(format: "%04d", $0))"), ("email", "c\($0)@example.com")])
            }
            let book = try await AddressBookTests.book(user, contacts)
            let postgres = database.makeClient(logger: .test)
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await postgres.run() }
                func transactions() async throws -> Int64 {
                    try await Task.sleep(for: .seconds(2))  // the server's statistics reach the view within a second
                    let rows = try await postgres.query(
                        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()", logger: .test)
                    for try await count in rows.decode(Int64.self) { return count }
                    return 0
                }
                let before = try await transactions()
                #expect(try await user.get("/address-books/\(bareUUID(book.id))/duplicates").status == 200)
                let after = try await transactions()
                #expect(after - before < 100, "\(after - before) transactions for one request")
                group.cancelAll()
            }
        }
    }
}
