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
}
