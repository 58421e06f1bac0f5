@testable import SecretService
import Testing

/// The ID of a persisted item comes from its collection and attribute set (decision 0268): the
/// same on every machine for the same set, whatever the order the attributes came in or the
/// Unicode form of their text, and a valid object path element like a random ID.
@Suite struct SecretItemIDTests {
    @Test func oneAttributeSetInOneCollectionHasOneID() {
        let id = SecretStore.id(for: ["service": "mail.example.com", "user": "alice"], in: "login")
        #expect(SecretStore.id(for: ["user": "alice", "service": "mail.example.com"], in: "login") == id)
        #expect(id.count == 32 && SecretStore.isPathElement(id))
        #expect(id == SecretStore.id(for: ["service": "mail.example.com", "user": "alice"], in: "login"))
    }

    @Test func composedAndDecomposedTextNameOneItem() {
        // "é" as one scalar and as "e" plus a combining acute accent: equal Swift strings.
        #expect(SecretStore.id(for: ["user": "ren\u{E9}"], in: "login") == SecretStore.id(for: ["user": "rene\u{301}"], in: "login"))
        #expect(SecretStore.id(for: ["caf\u{E9}": "x"], in: "login") == SecretStore.id(for: ["cafe\u{301}": "x"], in: "login"))
    }

    @Test func anotherCollectionOrSetIsAnotherItem() {
        let id = SecretStore.id(for: ["service": "mail.example.com", "user": "alice"], in: "login")
        #expect(SecretStore.id(for: ["service": "mail.example.com", "user": "alice"], in: "work") != id)
        #expect(SecretStore.id(for: ["service": "mail.example.com", "user": "bob"], in: "login") != id)
        #expect(SecretStore.id(for: ["service": "mail.example.com"], in: "login") != id)
        // Length prefixes: moving text across the name/value boundary is another set.
        #expect(SecretStore.id(for: ["ab": "c"], in: "login") != SecretStore.id(for: ["a": "bc"], in: "login"))
        #expect(SecretStore.id(for: [:], in: "login") != SecretStore.id(for: [:], in: "work"))
    }

    /// Another item of a set (a store that did not replace, decision 0303) has an ID of its own,
    /// which every machine can tell stands alone in that set, and in no other; the set's own ID
    /// stands alone too, a random one does not.
    @Test func anotherItemOfASetIsKnownAsSuchFromItsID() {
        let set = ["service": "mail.example.com", "user": "alice"]
        let (first, second) = (SecretStore.anotherID(for: set, in: "login"), SecretStore.anotherID(for: set, in: "login"))
        #expect(first != second && first.count == 32 && SecretStore.isPathElement(first))
        #expect(SecretStore.standsAlone(first, holding: set, in: "login"))
        #expect(SecretStore.standsAlone(first, holding: ["user": "alice", "service": "mail.example.com"], in: "login"))
        #expect(SecretStore.standsAlone(SecretStore.id(for: set, in: "login"), holding: set, in: "login"))
        #expect(!SecretStore.standsAlone(first, holding: ["service": "mail.example.com", "user": "bob"], in: "login"))
        #expect(!SecretStore.standsAlone(first, holding: set, in: "work"))
        #expect(!SecretStore.standsAlone(SecretStore.newID(), holding: set, in: "login"))
        #expect(!SecretStore.standsAlone("not hex", holding: set, in: "login"))
    }
}
