// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A throw-away PKI made with the `openssl` command line for TLS tests: a CA,
/// a server certificate for 127.0.0.1/localhost and a client certificate,
/// all signed by the CA (P-256 keys, valid one day), plus a second,
/// unrelated CA for negative tests. Files live in `directory`.
public final class TestCertificates: @unchecked Sendable {
    public let directory: String
    public var caFile: String { directory + "/ca.crt" }
    public var otherCAFile: String { directory + "/other-ca.crt" }
    public var serverCert: String { directory + "/server.crt" }
    public var serverKey: String { directory + "/server.key" }
    public var clientCert: String { directory + "/client.crt" }
    public var clientKey: String { directory + "/client.key" }

    /// Runs openssl (about a second); throws with its output when it fails.
    public init() throws {
        directory = try makeTemporaryDirectory(prefix: "test-pki")
        let key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        let script = """
        set -e
        cd '\(directory)'
        openssl req -x509 \(key) -keyout ca.key -out ca.crt -days 1 -subj /CN=ambient-speaker-test-ca
        openssl req -x509 \(key) -keyout other-ca.key -out other-ca.crt -days 1 -subj /CN=unrelated-ca
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext
        openssl req \(key) -keyout server.key -out server.csr -subj /CN=127.0.0.1
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 -extfile server.ext
        openssl req \(key) -keyout client.key -out client.csr -subj /CN=ambient-speaker-test-client
        openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 1
        chmod 644 *.key
        """
        try runShell(script, logPath: directory + "/openssl.log")
    }

    deinit {
        _ = try? runShell("rm -rf '\(directory)'", logPath: "/dev/null")
    }
}

/// Runs `/bin/sh -c script`, output appended to `logPath`; throws with the
/// log when it exits non-zero or takes longer than `timeout` seconds.
public func runShell(_ script: String, logPath: String, timeout: Double = 60) throws {
    let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", script], logPath: logPath)
    let status = child.waitForExit(timeout: timeout)
    guard status == 0 else {
        throw TestSupportError("sh -c", "exit \(status.map(String.init) ?? "timeout"): \((try? readText(logPath)) ?? "")")
    }
}
