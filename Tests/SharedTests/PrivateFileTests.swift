import Foundation
import LayerServer
import Testing

/// `Secrets.writePrivately` and `Secrets.createPrivateDirectory`: what `layer dev` keeps its
/// tokens, keys and passwords in.
@Suite(.serialized) struct PrivateFileTests {
    func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("private-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    func mode(_ url: URL) throws -> Int {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { throw Secrets.FileError(operation: "lstat", path: url.path, code: errno) }
        return Int(info.st_mode & 0o7777)
    }

    func inode(_ url: URL) -> UInt {
        var info = stat()
        return lstat(url.path, &info) == 0 ? UInt(info.st_ino) : 0
    }

    @Test func writesAFileOnlyItsOwnerMayRead() throws {
        try withFolder { folder in
            let file = folder.appendingPathComponent("secrets.json")
            try Secrets.writePrivately(Data("{\"token\":\"s3cret\"}".utf8), to: file)
            #expect(try mode(file) == 0o600)
            #expect(try String(contentsOf: file, encoding: .utf8) == "{\"token\":\"s3cret\"}")
            // Nothing is left behind under a temporary name.
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["secrets.json"])
        }
    }

    @Test func replacesAReadableFileWithANewPrivateOne() throws {
        try withFolder { folder in
            let file = folder.appendingPathComponent("dev.json")
            #expect(
                FileManager.default.createFile(
                    atPath: file.path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644]))
            #expect(try mode(file) == 0o644)
            let before = inode(file)
            try Secrets.writePrivately(Data("new".utf8), to: file)
            // Another file, not the old one narrowed: a reader who opened the old one never sees the new content.
            #expect(inode(file) != before)
            #expect(try mode(file) == 0o600)
            #expect(try String(contentsOf: file, encoding: .utf8) == "new")
        }
    }

    @Test func theUmaskNeitherWidensNorNarrowsIt() throws {
        try withFolder { folder in
            for (index, mask) in [mode_t(0), 0o022, 0o277].enumerated() {
                let file = folder.appendingPathComponent("password-\(index)")
                let previous = umask(mask)
                let written = Result { try Secrets.writePrivately(Data("pw".utf8), to: file) }
                umask(previous)
                try written.get()
                #expect(try mode(file) == 0o600, "umask \(String(mask, radix: 8))")
                #expect(try String(contentsOf: file, encoding: .utf8) == "pw")
            }
        }
    }

    @Test func aSymbolicLinkIsReplacedNotFollowed() throws {
        try withFolder { folder in
            let elsewhere = folder.appendingPathComponent("elsewhere")
            #expect(
                FileManager.default.createFile(
                    atPath: elsewhere.path, contents: Data("untouched".utf8), attributes: [.posixPermissions: 0o644]))
            let link = folder.appendingPathComponent("demo-key.pem")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
            try Secrets.writePrivately(Data("key".utf8), to: link)
            #expect(try String(contentsOf: elsewhere, encoding: .utf8) == "untouched")
            #expect(try mode(elsewhere) == 0o644)
            #expect(try mode(link) == 0o600)
            #expect(try String(contentsOf: link, encoding: .utf8) == "key")
        }
    }

    @Test func aFailedWriteLeavesNothingBehind() throws {
        try withFolder { folder in
            let missing = folder.appendingPathComponent("no-such-folder/secrets.json")
            #expect(throws: Secrets.FileError.self) { try Secrets.writePrivately(Data("x".utf8), to: missing) }
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(left.isEmpty)
        }
    }

    @Test func makesAndNarrowsAPrivateDirectory() throws {
        try withFolder { folder in
            let fresh = folder.appendingPathComponent("a/b/.layer")
            let previous = umask(0)
            let made = Result { try Secrets.createPrivateDirectory(at: fresh) }
            umask(previous)
            try made.get()
            #expect(try mode(fresh) == 0o700)

            let open = folder.appendingPathComponent("open")
            try FileManager.default.createDirectory(
                at: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            try Data("kept".utf8).write(to: open.appendingPathComponent("kept"))
            try Secrets.createPrivateDirectory(at: open)
            #expect(try mode(open) == 0o700)
            #expect(try String(contentsOf: open.appendingPathComponent("kept"), encoding: .utf8) == "kept")
        }
    }
}
