import Foundation
import Testing
import XMPPCore

@testable import XMPPServer

/// The PUT permit (`UploadSigner`), slot ids, and the checks of file names
/// and content types, without a server.
@Suite struct UploadSignerTests {
    private let signer = UploadSigner(serverSecret: Array(repeating: 7, count: 32))
    private let slot = "AAAAAAAAAAAAAAAAAAAAAA"

    private func permit(size: Int = 1000, type: String = "image/jpeg", expiry: Int = 2000) -> String {
        signer.permit(slot: slot, filename: "photo.jpg", size: size, contentType: type, expiry: expiry)
    }

    private func verify(
        _ permit: String, slot: String? = nil, filename: String = "photo.jpg", type: String = "image/jpeg",
        now: Int = 1000
    ) -> UploadSigner.Verdict {
        signer.verify(permit: permit[...], slot: slot ?? self.slot, filename: filename, contentType: type, now: now)
    }

    @Test func aPermitIsValidForItsSlotFileAndTypeUntilItsExpiry() throws {
        let permit = permit()
        #expect(try #/^2000\.1000\.[0-9a-f]{32}$/#.wholeMatch(in: permit) != nil)
        #expect(verify(permit) == .valid(size: 1000))
        #expect(verify(permit, now: 1999) == .valid(size: 1000))
        #expect(verify(permit, now: 2000) == .expired)
        #expect(verify(permit, now: 5000) == .expired)
    }

    @Test func anythingChangedMakesItForged() {
        let permit = permit()
        #expect(verify(permit, slot: "BAAAAAAAAAAAAAAAAAAAAA") == .forged)
        #expect(verify(permit, filename: "photo.png") == .forged)
        #expect(verify(permit, type: "image/png") == .forged)
        let parts = permit.split(separator: ".")
        #expect(verify("3000.\(parts[1]).\(parts[2])") == .forged, "a later expiry")
        #expect(verify("\(parts[0]).2000.\(parts[2])") == .forged, "a larger size")
        let other = UploadSigner(serverSecret: Array(repeating: 8, count: 32))
        #expect(
            other.verify(permit: permit[...], slot: slot, filename: "photo.jpg", contentType: "image/jpeg", now: 0)
                == .forged, "another server's key")
        // An expired permit is reported as forged unless it is genuine.
        #expect(verify("10.\(parts[1]).\(parts[2])", now: 5000) == .forged)
    }

    @Test(arguments: [
        "", "2000", "2000.1000", "2000.1000.", "x.1000.00000000000000000000000000000000",
        "2000.-1.00000000000000000000000000000000", "2000.1000.0000000000000000000000000000000",
        "2000.1000.0000000000000000000000000000000g", "2000.1000.+0000000000000000000000000000000",
        "2000.1000.00000000000000000000000000000000.1", "9999999999999999999.1.00000000000000000000000000000000",
    ])
    func malformedPermits(_ permit: String) {
        #expect(verify(permit) == .malformed)
    }

    @Test func theKeyIsNotTheServerSecret() {
        let secret: [UInt8] = Array(repeating: 7, count: 32)
        let direct = HashFunction.sha256.hmac(
            key: secret, message: Array("swiftlet-upload-1\n\(slot)\nphoto.jpg\n1000\nimage/jpeg\n2000".utf8))
        #expect(!permit().hasSuffix(direct.prefix(16).map { String(format: "%02x", $0) }.joined()))
    }

    @Test func slotIDsAreLongRandomAndURLSafe() {
        let ids = (0..<100).map { _ in UploadSlotID.make() }
        #expect(Set(ids).count == 100)
        for id in ids {
            #expect(UploadSlotID.isValid(id), "\(id)")
        }
        #expect(!UploadSlotID.isValid("short"))
        #expect(!UploadSlotID.isValid("AAAAAAAAAAAAAAAAAAAAA/"))
        #expect(!UploadSlotID.isValid("AAAAAAAAAAAAAAAAAAAAA.part"))
    }

    @Test func fileNames() {
        for good in ["a.jpg", "Ünïcödé 写真 😀.png", ".hidden", "a b+c&d=e?f#g%h.txt", String(repeating: "x", count: 255)] {
            #expect(UploadNaming.checkedFilename(good) == good)
        }
        for bad in ["", ".", "..", "a/b", "a\\b", "a\nb", "a\u{0}b", "a\u{7F}", "evil\u{202E}gpj.exe", String(repeating: "é", count: 128)] {
            #expect(UploadNaming.checkedFilename(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func fileNamesRoundTripThroughURLs() {
        for name in ["a.jpg", "Ünïcödé 写真 😀.png", "a b+c&d=e?f#g%h.txt", "100%.txt", "~-._"] {
            let encoded = UploadNaming.percentEncoded(name)
            #expect(encoded.utf8.allSatisfy { $0 < 0x80 && !"/?#& +".utf8.contains($0) })
            #expect(UploadNaming.percentDecoded(encoded[...]) == name)
        }
        #expect(UploadNaming.percentEncoded("a b.jpg") == "a%20b.jpg")
        #expect(UploadNaming.percentDecoded("%zz") == nil)
        #expect(UploadNaming.percentDecoded("%4") == nil)
        #expect(UploadNaming.percentDecoded("%FF") == nil, "not UTF-8")
        #expect(UploadNaming.percentDecoded("plain") == "plain")
    }

    @Test func contentTypes() {
        #expect(UploadNaming.checkedContentType("image/jpeg") == "image/jpeg")
        #expect(UploadNaming.checkedContentType(" Image/JPEG ") == "image/jpeg")
        #expect(UploadNaming.checkedContentType("text/plain; charset=utf-8") == "text/plain; charset=utf-8")
        #expect(UploadNaming.checkedContentType("Text/Plain;Charset=UTF-8") == "text/plain; charset=utf-8")
        #expect(UploadNaming.checkedContentType("text/plain;") == nil)
        for bad in ["", "image", "image/", "/jpeg", "image/jp eg", "image/jpeg/x", "imagé/jpeg", "a/b\u{1}"] {
            #expect(UploadNaming.checkedContentType(bad) == nil, "\(bad.debugDescription)")
        }
        #expect(UploadNaming.isInline("image/png"))
        #expect(UploadNaming.isInline("video/mp4"))
        #expect(UploadNaming.isInline("audio/ogg; codecs=opus"))
        #expect(!UploadNaming.isInline("image/svg+xml"))
        #expect(!UploadNaming.isInline("text/html"))
        #expect(!UploadNaming.isInline("application/pdf"))
    }

    @Test func contentDispositionCarriesBothNames() {
        #expect(
            UploadHTTPResponder.dispositionFilename("a \"b\" é.txt")
                == "filename=\"a _b_ _.txt\"; filename*=UTF-8''a%20%22b%22%20%C3%A9.txt")
    }

    @Test func uploadPaths() {
        let slot = "abcdefghijklmnopqrstuv"
        #expect(UploadHTTPResponder.parsePath("/upload/\(slot)/a%20b.jpg")! == (slot, "a b.jpg"))
        for bad in [
            "/upload/\(slot)/", "/upload/\(slot)", "/upload/short/a.jpg", "/upload/\(slot)/a/b.jpg",
            "/uploads/\(slot)/a.jpg", "/upload/\(slot)/%2E%2E", "/upload/\(slot)/a%2Fb", "/",
        ] {
            #expect(UploadHTTPResponder.parsePath(bad[...]) == nil, "\(bad)")
        }
    }

    @Test func httpDatesAreIMFFixdate() {
        #expect(httpDate(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(httpDate(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
