import KeychainStore
import Testing

@Suite struct KeychainLocationTests {
    @Test func keychainPathVariableWins() {
        #expect(KeychainLocation.defaultPath(environment: ["KEYCHAIN_PATH": "/x/k.db", "HOME": "/home/u"]) == "/x/k.db")
    }

    @Test func xdgDataHomeComesNext() {
        #expect(KeychainLocation.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == "/data/synckeychain/keychain.db")
    }

    @Test func otherwiseTheHomeDirectory() {
        #expect(KeychainLocation.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.local/share/synckeychain/keychain.db")
        #expect(KeychainLocation.defaultPath(environment: ["HOME": "/home/u", "XDG_DATA_HOME": "relative"]) == "/home/u/.local/share/synckeychain/keychain.db")
    }
}
