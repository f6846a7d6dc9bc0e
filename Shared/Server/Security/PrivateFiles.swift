import Foundation

/// Files and folders that hold secrets (tokens, passwords, private keys): only their owner may
/// read them, from the first byte on.
///
/// Writing a file and then changing its mode leaves a moment in which anyone may read it, and a
/// file that already exists keeps its old mode when it is overwritten. So a private file is
/// created under a new name in the same folder with `O_CREAT | O_EXCL` and mode 0600, written,
/// flushed to disk and renamed over the target: a reader sees the old file or the whole new one,
/// never a part, and never with wider permissions.
extension Secrets {
    public struct FileError: Error, CustomStringConvertible {
        public let operation: String
        public let path: String
        public let code: Int32

        public init(operation: String, path: String, code: Int32) {
            self.operation = operation
            self.path = path
            self.code = code
        }

        public var description: String {
            "\(operation) \(path): \(String(cString: strerror(code)))"
        }
    }

    /// Replaces the file at `url` with `data`, readable and writable by its owner only (0600,
    /// whatever the umask). A symbolic link at `url` is replaced, not followed.
    public static func writePrivately(_ data: Data, to url: URL) throws {
        let target = url.path
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(randomToken(bytes: 9)).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileError(operation: "create", path: temporary, code: errno) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            // The umask may have taken bits away (0400, or less); the owner gets back exactly 0600.
            guard fchmod(descriptor, 0o600) == 0 else { throw FileError(operation: "chmod", path: temporary, code: errno) }
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw FileError(operation: "write", path: temporary, code: errno)
                    }
                    offset += written
                }
            }
            guard fsync(descriptor) == 0 else { throw FileError(operation: "fsync", path: temporary, code: errno) }
        }
        guard rename(temporary, target) == 0 else { throw FileError(operation: "rename", path: target, code: errno) }
        renamed = true
        syncDirectory(of: url)
    }

    /// Makes `url` a folder only its owner may enter (0700), creating it and its parents when
    /// missing, and narrowing it when it exists with a wider mode.
    public static func createPrivateDirectory(at url: URL) throws {
        let parent = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        if mkdir(url.path, 0o700) != 0, errno != EEXIST {
            throw FileError(operation: "mkdir", path: url.path, code: errno)
        }
        guard chmod(url.path, 0o700) == 0 else { throw FileError(operation: "chmod", path: url.path, code: errno) }
    }

    /// Flushes a folder's entries, so that a rename in it survives a crash.
    private static func syncDirectory(of url: URL) {
        let descriptor = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}
