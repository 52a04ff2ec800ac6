@_spi(Backend) import Coffer
import Foundation
import Logging

/// A backend to run the conformance suite against, named by a store URL.
///
/// The suite never opens the URL itself: every check makes fresh stores with the registry
/// entry's `scratchURL`, derived from the URL (so its options are kept) and placed in a folder
/// of its own under ``init(url:registry:directory:)``'s `directory`.
///
/// ```swift
/// let target = try await ConformanceTarget(
///   url: "memory:", registry: .makeBuiltIn(), directory: NSTemporaryDirectory() + "coffer-conformance")
/// let results = await ConformanceSuite.run(on: target)
/// ```
///
/// The multi-process checks also need a program to start as a second process on the same store
/// (``child``); without one they are reported as skipped, saying so.
public struct ConformanceTarget: Sendable {
  /// A program the multi-process checks start as a second process: it is run as
  /// `executable arguments… URL FIRST COUNT` and must call
  /// ``ConformanceSuite/runChild(arguments:registry:)`` with `URL FIRST COUNT` and a registry that
  /// opens the URL. The `coffer` executable does this: `coffer conformance-child`.
  public struct ChildProgram: Sendable, Hashable {
    /// The program's path.
    public var executable: String
    /// The arguments that come before `URL FIRST COUNT`.
    public var arguments: [String]

    /// A child program.
    public init(executable: String, arguments: [String] = []) {
      self.executable = executable
      self.arguments = arguments
    }

    /// The `coffer` executable at `path`, run as `coffer conformance-child`.
    public static func coffer(at path: String) -> ChildProgram {
      ChildProgram(executable: path, arguments: ["conformance-child"])
    }
  }

  /// The URL as given, without a password it may hold: what reports and messages show.
  public let name: String
  /// What the backend declares and adopts, read from a scratch store.
  public let capabilities: CheckRequirements
  /// The program the multi-process checks run as a second process, if any.
  public let child: ChildProgram?
  /// The row codecs every check runs with, one run each: by default both the code `@Storable`
  /// generates and the `Codable` derivation, so that a backend is shown to behave the same for
  /// models declared either way.
  @_spi(Backend) public let rowCodecs: [RowCodecChoice] = RowCodecChoice.allCases
  /// A logger that also receives what the checks' stores and backends log, besides the copy the
  /// checks keep to search: what `coffer conformance --log-level` writes. `nil` (the default)
  /// logs nowhere else.
  public var logger: Logger?
  let base: StoreURL
  let entry: BackendRegistry.Entry
  let directory: String

  /// Prepares a target: parses the URL, finds its backend in the registry, creates `directory`
  /// if needed, and opens one scratch store to read the backend's capabilities, then closes it.
  ///
  /// - Throws: ``Coffer/CofferError/Code/invalidURL`` or ``Coffer/CofferError/Code/unknownScheme``
  ///   for a URL the registry cannot open, or the backend's error when the scratch store fails.
  public init(
    url: String, registry: BackendRegistry, directory: String, child: ChildProgram? = nil
  ) async throws {
    let base = try StoreURL(url)
    let entry = try registry.entry(for: base)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let probeDirectory = (directory as NSString).appendingPathComponent("capabilities-\(UUID().uuidString)")
    try FileManager.default.createDirectory(atPath: probeDirectory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: probeDirectory) }
    let probe = entry.scratchURL(base, probeDirectory, "capabilities-\(UUID().uuidString)")
    let backend = try await entry.open(probe, .disabled)
    let capabilities = CheckRequirements(of: backend)
    try await backend.close()
    await entry.removeScratch?(probe)
    self.name = base.description
    self.capabilities = capabilities
    self.base = base
    self.entry = entry
    self.directory = directory
    self.child = child
  }

  /// A URL for a new scratch store in `folder`.
  func removeScratch(_ url: StoreURL) async { await entry.removeScratch?(url) }

  func scratchURL(in folder: String, name: String) -> StoreURL {
    entry.scratchURL(base, folder, name)
  }

  /// Opens the store a scratch URL names, its backend logging to `logger`.
  func open(_ url: StoreURL, logger: Logger = .disabled) async throws -> any StorageBackend {
    try await entry.open(url, logger.forStore(url.description))
  }
}
