package lab.common;

import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;

import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * {@link StatsFilter} for Reactor Netty, which has no servlet filters: it wraps the app's whole
 * {@link HttpHandler}, so it sees every request on the event loop where it enters application
 * code, and the final status after Spring's exception handlers have turned a failure into one
 * (a {@code WebFilter} sits inside those handlers and would see a bare error instead).
 * A request is finished when its {@code Mono} ends: the response has been written, or the client
 * went away (cancel: not a server error by itself, as in {@link StatsFilter}).
 */
final class StatsHttpHandler implements HttpHandler {

    private final HttpHandler app;
    private final Stats stats;

    StatsHttpHandler(HttpHandler app, Stats stats) {
        this.app = app;
        this.stats = stats;
    }

    @Override
    public Mono<Void> handle(ServerHttpRequest request, ServerHttpResponse response) {
        stats.handlerThread();
        stats.requestStarted();
        // defer: a handler that throws instead of returning an error still counts as finished.
        return Mono.defer(() -> app.handle(request, response)).doFinally(signal -> {
            HttpStatusCode status = response.getStatusCode();
            stats.requestFinished(signal == SignalType.ON_ERROR ? 500 : status == null ? 200 : status.value());
        });
    }
}
