internal import Foundation
package import Markup

/// Turns the schema.org graph of a document into reservations (MARKUP.md): finds every reservation
/// item wherever it is nested (except the results of a `potentialAction` and what an offer holds:
/// "What is not a reservation"), makes one item per thing its `reservationFor` holds, folds the Gmail
/// and Apple dialects into one normal form, holds each item to the required properties, resolves
/// times, gives each part its identity, and says which bookings the document lists whole
/// (`ResolvedDocument.bookings`).
///
/// The work per graph is bounded by `Configuration`: items walked, nesting depth, reservations.
package struct ReservationResolver: Sendable {
    package struct Configuration: Sendable {
        /// Deepest nesting walked to find reservations and kept inside one reservation item.
        package var maxDepth: Int
        /// Most items visited in one graph (reservations and everything around them).
        package var maxItemsWalked: Int
        /// Most reservation items resolved from one graph; the rest are skipped with a diagnostic.
        package var maxReservations: Int
        /// Most items kept inside one reservation item after `@id` references are followed.
        package var maxItemsPerReservation: Int
        /// Airport and country time-zone tables for datetimes without offset.
        package var timeZones: TimeZoneDirectory

        package init(
            maxDepth: Int = 16, maxItemsWalked: Int = 20_000, maxReservations: Int = 200,
            maxItemsPerReservation: Int = 2_000, timeZones: TimeZoneDirectory = .bundled
        ) {
            self.maxDepth = maxDepth
            self.maxItemsWalked = maxItemsWalked
            self.maxReservations = maxReservations
            self.maxItemsPerReservation = maxItemsPerReservation
            self.timeZones = timeZones
        }
    }

    package var configuration: Configuration

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// One resolution per distinct reservation item in the graph (per reserved thing), admissible or
    /// not, in document order. Items that are not reservations (plain events, products, action
    /// templates, offers) give none.
    package func resolve(_ graph: MarkupGraph) -> [Resolution] {
        resolveDocument(graph).resolutions
    }

    /// Like `resolve`, with the diagnostics that concern the whole document (limits reached).
    package func resolveDocument(_ graph: MarkupGraph) -> ResolvedDocument {
        var document = ResolvedDocument()
        let found = findReservations(in: graph, diagnostics: &document.diagnostics)
        var resolutions: [Resolution] = []
        var countReported = false
        for item in found {
            let budget = configuration.maxReservations - resolutions.count
            guard budget > 0 else { break }
            let (resolved, truncated) = resolveItem(item, index: found.index, budget: budget)
            resolutions += resolved
            if truncated, !countReported {
                countReported = true
                document.diagnostics.append(
                    Diagnostic(
                        .warning, .limitExceeded,
                        "more than \(configuration.maxReservations) reservations; the rest were skipped"))
            }
        }
        resolutions = Self.removingDuplicates(resolutions)
        ReservationIdentity.assign(&resolutions)
        document.resolutions = resolutions
        return document
    }

    // MARK: Finding reservations

    /// A reservation item found in the graph.
    struct FoundItem {
        var node: SchemaNode
        /// Nil for an out-of-scope reservation type.
        var kind: Reservation.Kind?
        /// The type as written, local name.
        var writtenType: String
    }

    struct FoundItems: Sequence {
        var items: [FoundItem] = []
        /// `@id` → the first item with content carrying it, to follow references.
        var index: [String: SchemaNode] = [:]
        func makeIterator() -> IndexingIterator<[FoundItem]> { items.makeIterator() }
    }

    /// Why the items below a node are not bookings held (MARKUP.md, "What is not a reservation"), and
    /// the property path from the top-level item down to them.
    struct NotHeld {
        var code: Diagnostic.Code
        var path: String
        /// The top-level item (from 1), for the message.
        var top: Int
    }

    func findReservations(in graph: MarkupGraph, diagnostics: inout [Diagnostic]) -> FoundItems {
        var found = FoundItems()
        var walked = 0
        var depthReported = false
        var countReported = false
        // Depth-first, in document order, with an explicit stack: no recursion on input.
        // Each entry: the node, its depth, its top-level item (from 1), why it is not held (if so), and
        // whether it was reached through `acceptedOffer` (an Order's offer: bought, so held).
        var stack: [(node: SchemaNode, depth: Int, top: Int, notHeld: NotHeld?, accepted: Bool)] = graph.nodes
            .enumerated().reversed().map { ($0.element, 0, $0.offset + 1, nil, false) }
        while let (node, depth, top, notHeld, accepted) = stack.popLast() {
            walked += 1
            if walked > configuration.maxItemsWalked {
                diagnostics.append(
                    Diagnostic(
                        .warning, .limitExceeded,
                        "more than \(configuration.maxItemsWalked) items; the rest of the document was not searched"))
                break
            }
            if let id = node.id, !node.types.isEmpty || !node.properties.isEmpty, found.index[id] == nil {
                found.index[id] = node
            }
            if let item = classify(node) {
                if let notHeld {
                    diagnostics.append(Self.notHeldDiagnostic(notHeld, type: item.writtenType))
                } else if found.items.count >= configuration.maxReservations {
                    if !countReported {
                        countReported = true
                        diagnostics.append(
                            Diagnostic(
                                .warning, .limitExceeded,
                                "more than \(configuration.maxReservations) reservations; the rest were skipped"))
                    }
                } else {
                    found.items.append(item)
                }
            }
            var children: [(SchemaNode, NotHeld?, Bool)] = []
            let isOffer =
                notHeld == nil && !accepted
                && node.types.contains { SchemaVocabulary.offerTypes.contains(SchemaVocabulary.localName($0)) }
            for property in node.properties where property.values.contains(where: { $0.node != nil }) {
                let name = SchemaVocabulary.localName(property.name)
                let childNotHeld = Self.notHeld(below: notHeld, property: name, inOffer: isOffer, top: top)
                for value in property.values {
                    if let child = value.node { children.append((child, childNotHeld, name == "acceptedOffer")) }
                }
            }
            if !children.isEmpty {
                if depth + 1 > configuration.maxDepth {
                    if !depthReported {
                        depthReported = true
                        diagnostics.append(
                            Diagnostic(
                                .warning, .limitExceeded,
                                "items nested deeper than \(configuration.maxDepth) levels were not searched"))
                    }
                } else {
                    stack.append(contentsOf: children.reversed().map { ($0.0, depth + 1, top, $0.1, $0.2) })
                }
            }
        }
        return found
    }

    /// What the items under `name` (a local property name) of a node are: still not held below a template
    /// or an offer (the path grows), newly so under `potentialAction`, `offers` or an `Offer` (not an
    /// Order's `acceptedOffer`: that was bought), else held.
    static func notHeld(below parent: NotHeld?, property name: String, inOffer: Bool, top: Int) -> NotHeld? {
        if var parent {
            parent.path += "." + name
            return parent
        }
        let code: Diagnostic.Code
        if name == "potentialAction" {
            code = .actionTemplate
        } else if inOffer || SchemaVocabulary.offerProperties.contains(name) {
            code = .offeredItem
        } else {
            return nil
        }
        return NotHeld(code: code, path: name, top: top)
    }

    static func notHeldDiagnostic(_ notHeld: NotHeld, type: String) -> Diagnostic {
        let what =
            notHeld.code == .actionTemplate
            ? "is the result or template of a potentialAction: it describes what could be booked"
            : "is part of an offer: it describes what is offered"
        return Diagnostic(
            .warning, notHeld.code, path: notHeld.path,
            "the \(type) at \(notHeld.path) (under top-level item \(notHeld.top)) \(what), not a booking the "
                + "owner holds, and was not read as one. Give the booking as a reservation of its own")
    }

    /// The reservation kind of an item, nil when it is not a reservation at all.
    func classify(_ node: SchemaNode) -> FoundItem? {
        let types = node.types.map(SchemaVocabulary.localName)
        for type in types {
            if let kind = SchemaVocabulary.kindsByType[type] {
                return FoundItem(node: node, kind: kind, writtenType: type)
            }
        }
        for type in types where type == "Reservation" {
            let reserved = node.values("reservationFor").first?.node?.types.first.map(SchemaVocabulary.localName)
            return FoundItem(
                node: node, kind: reserved.flatMap(SchemaVocabulary.kind(ofReservedItemType:)), writtenType: type)
        }
        // `ReservationPackage` holds its parts in `subReservation`, which the walk visits.
        for type in types where type.hasSuffix("Reservation") && type != "ReservationPackage" {
            return FoundItem(node: node, kind: nil, writtenType: type)
        }
        return nil
    }

    // MARK: Resolving one item

    /// The resolutions of one item found: one per thing its `reservationFor` holds (MARKUP.md,
    /// "Required properties": several flights, legs or events under one reservation are separate
    /// items of one booking), at most `budget`; `truncated` when more were left out.
    func resolveItem(
        _ item: FoundItem, index: [String: SchemaNode], budget: Int
    ) -> (resolutions: [Resolution], truncated: Bool) {
        var nodes = configuration.maxItemsPerReservation
        var truncated = false
        let root = canonicalize(item.node, depth: 0, index: index, budget: &nodes, truncated: &truncated)
        let reserved = root.values("reservationFor")
        guard item.kind != nil, reserved.count > 1 else {
            return ([resolveItem(item, root: root, truncated: truncated)], false)
        }
        let resolutions = reserved.prefix(budget).map { value in
            var part = root
            part.set("reservationFor", [value])
            return resolveItem(item, root: part, truncated: truncated)
        }
        return (resolutions, reserved.count > budget)
    }

    /// One resolution of a found item, from its canonical copy `root` (made within the limits unless `truncated`).
    func resolveItem(_ item: FoundItem, root: SchemaNode, truncated: Bool) -> Resolution {
        var root = root
        var leading: [Diagnostic] = []
        if truncated {
            leading.append(
                Diagnostic(
                    .warning, .limitExceeded,
                    "the item nests deeper than \(configuration.maxDepth) levels or holds more than "
                        + "\(configuration.maxItemsPerReservation) items; the excess was ignored"))
        }
        guard let kind = item.kind else {
            root.types = [item.writtenType]
            let message =
                item.writtenType == "Reservation"
                ? "a Reservation whose reservationFor is not a flight, trip, lodging, restaurant, rental car or event is not handled"
                : "\(item.writtenType) is not one of the reservation types the gateway handles"
            return Resolution(
                reservation: nil, diagnostics: leading + [Diagnostic(.warning, .unsupportedType, path: "@type", message)],
                normalized: Self.json(root, isTopLevel: true), syntax: item.node.syntax)
        }
        if item.writtenType != kind.schemaType {
            leading.append(
                Diagnostic(
                    .warning, .alias, path: "@type",
                    "@type \(item.writtenType) for a reserved \(root.child("reservationFor")?.types.first ?? "item") was read as \(kind.schemaType); write that"
                ))
        }
        root.types = [kind.schemaType]
        var resolver = ReservationItemResolver(kind: kind, root: root, directory: configuration.timeZones)
        var reservation = resolver.resolve()
        var seen = Set<Diagnostic>()
        let diagnostics = (leading + resolver.diagnostics).filter { seen.insert($0).inserted }
        let normalized = Self.json(resolver.root, isTopLevel: true)
        let actions = ReservationAction.inferringWindows(ReservationAction.fromMarkup(normalized), for: reservation)
        reservation.actions = actions.isEmpty ? nil : actions
        return Resolution(reservation: reservation, diagnostics: diagnostics, normalized: normalized, syntax: item.node.syntax)
    }

    /// A copy of `node` with schema.org IRIs stripped from types and property names, text trimmed,
    /// empty text dropped, and `@id`-only references replaced by the item they name. Bounded by
    /// `maxDepth` and by `budget` items.
    func canonicalize(
        _ node: SchemaNode, depth: Int, index: [String: SchemaNode], budget: inout Int, truncated: inout Bool
    ) -> SchemaNode {
        var result = SchemaNode(types: node.types.map(SchemaVocabulary.localName), id: node.id, syntax: node.syntax)
        // Where each name went in `result`: two spellings (`name`, `http://schema.org/name`) merge,
        // and an item with very many properties stays linear.
        var positions: [String: Int] = [:]
        func append(_ value: SchemaValue, for name: String) {
            if let position = positions[name] {
                result.properties[position].values.append(value)
            } else {
                positions[name] = result.properties.count
                result.properties.append(SchemaProperty(name: name, values: [value]))
            }
        }
        for property in node.properties {
            let name = SchemaVocabulary.localName(property.name)
            guard !name.isEmpty, !name.hasPrefix("@") else { continue }
            for value in property.values {
                switch value {
                case .text(let text):
                    let trimmed = text.trimmingWhitespace()
                    if !trimmed.isEmpty { append(.text(trimmed), for: name) }
                case .node(var child):
                    guard depth < configuration.maxDepth, budget > 0 else {
                        truncated = true
                        continue
                    }
                    budget -= 1
                    if child.types.isEmpty, child.properties.isEmpty, let id = child.id, let target = index[id] {
                        child = target
                    }
                    append(
                        .node(canonicalize(child, depth: depth + 1, index: index, budget: &budget, truncated: &truncated)),
                        for: name)
                }
            }
        }
        return result
    }

    /// The JSON-LD object of a canonical item (its depth is already bounded by `canonicalize`).
    static func json(_ node: SchemaNode, isTopLevel: Bool) -> JSONValue {
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(node.properties.count + 3)  // grown once, not doubled member by member
        if isTopLevel { members["@context"] = .string("https://schema.org") }
        if node.types.count == 1 {
            members["@type"] = .string(node.types[0])
        } else if !node.types.isEmpty {
            members["@type"] = .array(node.types.map { .string($0) })
        }
        if let id = node.id { members["@id"] = .string(id) }
        for property in node.properties {
            let values = property.values.map { value -> JSONValue in
                switch value {
                case .text(let text): .string(text)
                case .node(let child): json(child, isTopLevel: false)
                }
            }
            members[property.name] = values.count == 1 ? values[0] : .array(values)
        }
        return .object(members)
    }

    // MARK: Duplicates

    /// Keeps one of each item given twice: equal reservations, or the same item in JSON-LD and
    /// Microdata where neither contradicts the other (the fuller one is kept).
    static func removingDuplicates(_ resolutions: [Resolution]) -> [Resolution] {
        var kept: [Resolution] = []
        var exact: [Reservation: Int] = [:]
        var unhandled: [JSONValue: Int] = [:]
        var byReservationId: [String: [Int]] = [:]
        // Models as JSON, made only when two syntaxes are compared (encoding is not free).
        var models: [JSONValue?] = []
        func model(at index: Int) -> JSONValue? {
            if models[index] == nil { models[index] = kept[index].reservation.map(modelJSON) }
            return models[index]
        }
        for resolution in resolutions {
            var candidate: JSONValue?
            var duplicateOf: Int?
            if let reservation = resolution.reservation {
                duplicateOf = exact[reservation]
                if duplicateOf == nil, let id = reservation.reservationId {
                    for index in byReservationId[id] ?? [] {
                        let other = kept[index]
                        guard other.syntax != resolution.syntax, other.reservation?.kind == reservation.kind else { continue }
                        if candidate == nil { candidate = modelJSON(reservation) }
                        if let candidate, let otherModel = model(at: index), isCompatible(candidate, otherModel) {
                            duplicateOf = index
                            break
                        }
                    }
                }
            } else {
                duplicateOf = unhandled[resolution.normalized]
            }
            guard let index = duplicateOf else {
                let index = kept.count
                kept.append(resolution)
                models.append(candidate)
                if let reservation = resolution.reservation {
                    exact[reservation] = index
                    if let id = reservation.reservationId { byReservationId[id, default: []].append(index) }
                } else {
                    unhandled[resolution.normalized] = index
                }
                continue
            }
            var winner = kept[index]
            let loser = resolution
            if errorCount(resolution) < errorCount(winner)
                || (errorCount(resolution) == errorCount(winner)
                    && fieldCount(candidate ?? resolution.reservation.map(modelJSON)) > fieldCount(model(at: index)))
            {
                winner = resolution
                models[index] = candidate
                if let reservation = resolution.reservation { exact[reservation] = index }
            }
            let syntaxNote =
                loser.syntax == kept[index].syntax ? "more than once" : "in both JSON-LD and Microdata"
            winner.diagnostics.append(
                Diagnostic(.warning, .duplicateItem, "the same reservation was given \(syntaxNote); one was kept"))
            winner.updateAdmissibility()
            kept[index] = winner
        }
        return kept
    }

    static func errorCount(_ resolution: Resolution) -> Int {
        resolution.diagnostics.count { $0.severity == .error }
    }

    static func modelJSON(_ reservation: Reservation) -> JSONValue {
        guard let data = try? CanonicalJSONEncoder().encode(reservation), let value = try? JSONValue(parsing: data)
        else { return .null }
        return value
    }

    /// Non-null leaves of a model (its fixed shape bounds the recursion).
    static func fieldCount(_ value: JSONValue?) -> Int {
        switch value {
        case .object(let members)?: members.values.reduce(0) { $0 + fieldCount($1) }
        case .array(let items)?: items.reduce(0) { $0 + fieldCount($1) }
        case .null?, nil: 0
        default: 1
        }
    }

    /// Two models agree wherever both give a value (arrays: element by element, or one empty).
    static func isCompatible(_ first: JSONValue, _ second: JSONValue) -> Bool {
        switch (first, second) {
        case (.null, _), (_, .null): return true
        case (.object(let a), .object(let b)):
            for (key, value) in a {
                if let other = b[key], !isCompatible(value, other) { return false }
            }
            return true
        case (.array(let a), .array(let b)):
            return a.isEmpty || b.isEmpty || (a.count == b.count && zip(a, b).allSatisfy { isCompatible($0, $1) })
        default:
            return first == second
        }
    }
}
