import KeychainModel
import Testing

@Suite struct KeychainStatusTests {
    @Test(arguments: [
        (KeychainStatus.success, Int32(0)), (.unimplemented, -4), (.param, -50), (.notAvailable, -25291),
        (.authFailed, -25293), (.duplicateItem, -25299), (.itemNotFound, -25300), (.noSuchAttribute, -25303),
        (.noSuchClass, -25306), (.interactionNotAllowed, -25308), (.decode, -26275),
    ])
    func statusHasApplesValue(status: KeychainStatus, value: Int32) {
        #expect(status.rawValue == value)
        #expect(KeychainStatus.allNamed.contains(status))
    }

    @Test func unknownStatusKeepsItsRawValue() {
        let status = KeychainStatus(rawValue: -12345)
        #expect(status.description.contains("-12345"))
        #expect(!KeychainStatus.allNamed.contains(status))
    }

    @Test func errorDescriptionCarriesCodeAndMessage() {
        let error = KeychainError(.duplicateItem)
        #expect(error.code == .duplicateItem)
        #expect(error.description == "duplicate item (-25299)")
    }
}
