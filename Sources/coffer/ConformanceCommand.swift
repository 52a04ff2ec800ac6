import ArgumentParser

extension CofferCommand {
  /// `coffer conformance`: runs the conformance suite against stores. (Being written.)
  struct Conformance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Run the conformance suite against one or more store URLs.")

    func run() async throws {}
  }
}
