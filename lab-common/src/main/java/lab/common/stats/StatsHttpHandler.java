package lab.common.stats;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
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
 *
 * <p>The admission limit ({@code --max-in-flight}, {@link Admission}) is applied here, before the
 * app's handler: beyond N, a 503 at once. The permit is given back in {@code doFinally}, which
 * runs exactly once per subscription whichever way the {@code Mono} ends — completed, failed, or
 * cancelled because the client went away. Not when {@code handle} returns: it returns as soon as
 * the pipeline is assembled, before anything ran, so that would be no limit at all.
 */
public final class StatsHttpHandler implements HttpHandler {

    private final HttpHandler app;
    private final Stats stats;
    private final Admission admission;

    public StatsHttpHandler(HttpHandler app, Stats stats) {
        this.app = app;
        this.stats = stats;
        this.admission = stats.admission();
    }

    @Override
    public Mono<Void> handle(ServerHttpRequest request, ServerHttpResponse response) {
        // Reactor Netty subscribes to what this returns, always: a permit taken here is released
        // by the doFinally below.
        if (!admission.tryAcquire()) return reject(response);
        stats.handlerThread();
        stats.requestStarted();
        // defer: a handler that throws instead of returning an error still counts as finished.
        return Mono.defer(() -> app.handle(request, response)).doFinally(signal -> {
            HttpStatusCode status = response.getStatusCode();
            stats.requestFinished(signal == SignalType.ON_ERROR ? 500 : status == null ? 200 : status.value());
            admission.release();
        });
    }

    /** 503 at once, on the event loop, with no application code. */
    private Mono<Void> reject(ServerHttpResponse response) {
        byte[] body = admission.rejection();
        response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
        response.getHeaders().setContentType(new MediaType(MediaType.TEXT_PLAIN, java.nio.charset.StandardCharsets.UTF_8));
        response.getHeaders().setContentLength(body.length);
        DataBuffer buffer = response.bufferFactory().wrap(body);
        return response.writeWith(Mono.just(buffer));
    }
}
