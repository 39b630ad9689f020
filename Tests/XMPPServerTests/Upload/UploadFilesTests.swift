import Foundation
import Glibc
import Testing

@testable import XMPPServer

/// The upload store on disk: a completed slot's file is final.
@Suite struct UploadFilesTests {
    private let slot = "AAAAAAAAAAAAAAAAAAAAAA"

    /// Runs `body` with the files of a fresh temporary data directory.
    private func withFiles(_ body: (UploadFiles) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("uploads-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = UploadFiles(dataDirectory: directory)
        try files.prepare()
        try body(files)
    }

    /// Uploads `content` through a part file, as `UploadSink` does.
    private func upload(_ content: String, to files: UploadFiles) throws {
        let descriptor = try files.createPart(of: slot)
        try Array(content.utf8).withUnsafeBytes { try UploadFiles.writeAll(descriptor, $0) }
        try files.complete(slot, "photo.jpg", descriptor: descriptor)
    }

    @Test func aSecondUploadToACompletedSlotCannotReplaceItsFile() throws {
        try withFiles { files in
            try upload("first", to: files)
            #expect(files.isComplete(slot, "photo.jpg"))
            // A replayed PUT that got its part file just after the first
            // upload was published, before anything marked it complete.
            let refusal = #expect(throws: UploadFileError.self) { try upload("other", to: files) }
            #expect(refusal?.errno == EEXIST)
            let stored = try String(contentsOfFile: files.path(of: slot, "photo.jpg"), encoding: .utf8)
            #expect(stored == "first")
            #expect(access(files.partPath(of: slot), F_OK) != 0, "the replay's part file is gone")
        }
    }
}
