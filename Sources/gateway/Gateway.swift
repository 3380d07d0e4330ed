import ArgumentParser

@main
struct Gateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Admits schema.org reservation markup only from trusted, registered sources."
    )
}
