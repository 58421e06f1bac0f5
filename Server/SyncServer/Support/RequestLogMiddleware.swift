import Hummingbird
import Logging

/// One log line per request once it is answered: method, path (without the query), status code
/// and duration. Replaces Hummingbird's `LogRequestsMiddleware`, whose line comes before the
/// answer and so has no status (decision 0262). Headers, bodies and query strings are never
/// logged: tokens travel in headers.
struct RequestLogMiddleware: RouterMiddleware {
    let level: Logger.Level

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, context, status: response.status.code, since: start)
            return response
        } catch {
            log(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, since: start)
            throw error
        }
    }

    private func log(_ request: Request, _ context: SyncRequestContext, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.log(
            level: level, "request",
            metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(status)",
                "ms": "\((milliseconds * 10).rounded() / 10)",
            ])
    }
}
