/// One decoder of outside bytes under fuzzing: what it is fed first (valid encodings the product
/// itself makes), how its inputs are mutated, and what it must hold for every input.
///
/// The body decodes the input the way the product does. For every input it must: not trap; throw
/// only its module's own clear error (``isClearError``), never an error of another kind; finish
/// within the per-input bound; and, for a decoder with an encoder, give back what it decoded when
/// its encoding is decoded again (the body checks this with ``FuzzCheck/require(_:_:)``).
package struct FuzzTarget: Sendable {
    /// The target's name: `area-decoder` (`import-json`, `wire-changes`, `server-upload`, …).
    package var name: String
    /// Valid encodings, made by the product's own encoders where it has one.
    package var seeds: [[UInt8]]
    /// Whether the inputs are JSON, so the mutator also mutates the document's tree.
    package var isJSON: Bool
    /// Words of the format worth inserting (field names, keywords).
    package var tokens: [String]
    /// Whether an error the body threw is the decoder's own clear refusal.
    package var isClearError: @Sendable (any Error) -> Bool
    /// Decodes one input; returns normally when it is accepted.
    package var body: @Sendable ([UInt8]) throws -> Void

    package init(
        _ name: String, seeds: [[UInt8]], isJSON: Bool = false, tokens: [String] = [],
        clearErrors isClearError: @escaping @Sendable (any Error) -> Bool, body: @escaping @Sendable ([UInt8]) throws -> Void
    ) {
        self.name = name
        self.seeds = seeds
        self.isJSON = isJSON
        self.tokens = tokens
        self.isClearError = isClearError
        self.body = body
    }

    /// What one input did.
    package enum Outcome: Sendable, Equatable {
        case accepted
        case refused
        /// A property broken: an error that is not the decoder's own, or a round trip that lost
        /// something. (A trap ends the process; a slow input is judged by the engine.)
        case broken(String)
    }

    /// Runs the body on `input` and judges what it did.
    package func outcome(of input: [UInt8]) -> Outcome {
        do {
            try body(input)
            return .accepted
        } catch let failure as FuzzCheck.Failure {
            return .broken(failure.message)
        } catch {
            return isClearError(error) ? .refused : .broken("threw \(type(of: error)), not the decoder's own error: \(String(describing: error).prefix(200))")
        }
    }
}

/// The properties a target's body checks beyond "no trap".
package enum FuzzCheck {
    /// A broken property; the engine reports it with the input.
    package struct Failure: Error, Sendable {
        package var message: String
    }

    /// Fails the input when `condition` does not hold.
    package static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(Failure) {
        if !condition { throw Failure(message: message()) }
    }
}
