import Logging

extension Logger {
  /// A logger that discards everything: what a ``Store`` and the built-in backends log to
  /// unless they are given one. Made afresh for each caller; Coffer keeps no global logger.
  package static var disabled: Logger {
    Logger(label: "coffer", factory: { _ in SwiftLogNoOpLogHandler() })
  }

  /// This logger with the store's name as `coffer.store` metadata, so every line says which
  /// store it is about. A store's name never holds a password.
  package func forStore(_ name: String) -> Logger {
    var logger = self
    logger[metadataKey: "coffer.store"] = .string(name)
    return logger
  }
}
