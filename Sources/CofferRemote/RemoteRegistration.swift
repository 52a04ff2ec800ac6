@_spi(Backend) import Coffer
import Foundation

extension BackendRegistry {
  /// Registers the `coffer+http:` and `coffer+https:` schemes:
  /// `coffer+https://HOST[:PORT][/PREFIX]?timeout=S&connectTimeout=S&retryFor=S&connections=N&tokenFile=PATH`
  /// (see ``RemoteBackend/Configuration``). The bearer token comes from `tokenFile` or the
  /// `COFFER_TOKEN` environment variable, never from the URL.
  ///
  /// Scratch stores (for the conformance suite) are stores of their own on the same server,
  /// named by the last component of the URL's path: the server must serve several stores by
  /// name, as a test server does.
  public mutating func registerRemote() {
    for scheme in ["coffer+http", "coffer+https"] {
      register(
        Entry(
          scheme: scheme,
          forms: [
            "\(scheme)://HOST[:PORT][/PREFIX]?timeout=SECONDS&connectTimeout=SECONDS&retryFor=SECONDS"
              + "&connections=N&tokenFile=PATH"
          ],
          open: { url, logger in
            try await RemoteBackend(configuration: try RemoteBackend.Configuration(url: url), logger: logger)
          },
          scratchURL: { base, directory, name in
            // One more path component, which the server takes as a store's name: the scratch
            // store's folder and name, hashed, so that it is the same each time the suite
            // reopens it.
            StoreURL(
              scheme: base.scheme,
              path: RemoteBackend.Configuration.normalized(prefix: base.path) + "/"
                + RemoteBackend.scratchName(for: directory + "/" + name),
              host: base.host, port: base.port, options: base.options)
          }))
    }
  }
}

extension RemoteBackend {
  /// A store name for a scratch store: `scratch-` and a hash of its folder and name.
  static func scratchName(for text: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    return "scratch-" + String(hash, radix: 36)
  }
}
