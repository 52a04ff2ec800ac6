extension StoreURL {
  /// The URL options every backend takes for its change feed: `changes=on` turns the feed on
  /// when the store is opened, `changeRetention=all|COUNT|AGE` keeps that much of it.
  static let changeFeedOptions: Set<String> = ["changes", "changeRetention"]

  /// The URL without the change feed's options, and the retention the feed is to be turned on
  /// with (`nil` when the URL does not turn it on).
  ///
  /// - Throws: ``CofferError/Code/invalidURL`` for an option value it does not know.
  func separatingChangeFeedOptions() throws -> (url: StoreURL, retention: ChangeRetention?) {
    guard options.keys.contains(where: Self.changeFeedOptions.contains) else { return (self, nil) }
    var rest = options
    let switched = rest.removeValue(forKey: "changes")
    let retentionText = rest.removeValue(forKey: "changeRetention")
    let on: Bool
    switch switched?.lowercased() {
    case "on", "true", "1": on = true
    case nil, "off", "false", "0": on = false
    default:
      throw CofferError(
        .invalidURL, "'\(self)': changes must be on or off, not '\(switched ?? "")'.", store: description)
    }
    var retention = ChangeRetention.all
    if let retentionText {
      guard let parsed = ChangeRetention(urlOption: retentionText) else {
        throw CofferError(
          .invalidURL,
          "'\(self)': changeRetention must be all, a number of batches (10000) or an age (90s, 30m, 12h, 7d), "
            + "not '\(retentionText)'.",
          store: description)
      }
      guard on else {
        throw CofferError(
          .invalidURL, "'\(self)': changeRetention applies only with changes=on; add it.", store: description)
      }
      retention = parsed
    }
    let url = StoreURL(
      scheme: scheme, path: path, hosts: hosts, user: user, password: password, options: rest)
    return (url, on ? retention : nil)
  }
}

extension BackendRegistry.Entry {
  /// This entry, opening stores whose URL says `changes=on` with their change feed turned on.
  /// The backend never sees the feed's options.
  func turningOnChangeFeeds() -> BackendRegistry.Entry {
    var entry = self
    let open = self.open
    let scheme = self.scheme
    entry.open = { url, logger in
      let (rest, retention) = try url.separatingChangeFeedOptions()
      let backend = try await open(rest, logger)
      guard let retention else { return backend }
      do {
        guard let recording = backend as? any ChangeRecording else {
          throw CofferError(
            .invalidURL,
            "'\(url)' asks for a change feed, which \(scheme): stores do not keep. Remove changes=on.",
            store: url.description)
        }
        try await recording.startRecordingChanges(retention: retention)
      } catch {
        try? await backend.close()
        throw error
      }
      return backend
    }
    return entry
  }
}
