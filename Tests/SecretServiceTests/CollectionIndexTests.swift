@testable import SecretService
import Testing

/// The index of persisted collections as a pure value: what a fresh read changed (the signals),
/// aliases set on two devices, and the names of new collections.
@Suite struct CollectionIndexTests {
    static func entry(_ id: String, in collection: String, label: String = "") -> SecretStore.Entry {
        SecretStore.Entry(id: id, collection: collection, label: label, attributes: ["k": id], contentType: "text/plain", created: 1, modified: 1)
    }

    @Test func changesListCreatedCollectionsFirstAndDeletedOnesLast() {
        var old = CollectionIndex()
        old.add(Self.entry("a1", in: "login"))
        old.add(Self.entry("w1", in: "work"))
        old.addCollection("work", .init(label: "Work", created: 1, modified: 1))
        var new = CollectionIndex()
        new.add(Self.entry("a1", in: "login", label: "renamed"))
        new.add(Self.entry("h1", in: "home"))
        #expect(old.changes(to: new) == [
            .collection("home", .created),
            .item(collection: "login", id: "a1", .changed),
            .item(collection: "home", id: "h1", .created),
            .item(collection: "work", id: "w1", .deleted),
            .collection("work", .deleted),
        ])
        var relabelled = new
        relabelled.addCollection("home", .init(label: "Home", created: 1, modified: 2))
        #expect(new.changes(to: relabelled) == [.collection("home", .changed)])
        #expect(new.changes(to: new).isEmpty)
    }

    @Test func theLaterAliasWinsThenTheFirstCollectionName() {
        var index = CollectionIndex()
        for name in ["work", "home"] { index.addCollection(name, .init(label: name, created: 1, modified: 1)) }
        #expect(index.collection(named: "default") == "login")
        index.addAlias("default", collection: "work", modified: 5)
        index.addAlias("default", collection: "home", modified: 4)
        #expect(index.collection(named: "default") == "work")
        index.addAlias("default", collection: "home", modified: 5)
        #expect(index.collection(named: "default") == "home")
        #expect(index.aliases(of: "home") == ["default"])
        #expect(index.aliases(of: "login") == [])
        // An alias whose collection is gone names nothing (default falls back to login).
        index.collections["home"] = nil
        #expect(index.collection(named: "default") == "login")
    }

    @Test func newCollectionsAreNamedAfterTheirLabels() {
        #expect(SecretStore.newCollectionName(label: "Work Secrets", taken: ["login"]) == "work_secrets")
        #expect(SecretStore.newCollectionName(label: "Work Secrets", taken: ["work_secrets"]) == "work_secrets_2")
        #expect(SecretStore.newCollectionName(label: "", taken: []) == "collection")
        #expect(SecretStore.newCollectionName(label: "Session", taken: []) == "session_2")
        #expect(SecretStore.isPathElement("a_Z9") && !SecretStore.isPathElement("a-b") && !SecretStore.isPathElement(""))
    }
}
