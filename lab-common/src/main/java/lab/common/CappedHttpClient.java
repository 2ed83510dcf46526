package lab.common;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * At most N exchanges with the remote at once: the connection pool that capped a public benchmark
 * at 14 % of its ceiling (lab-notes trap 1), made explicit so the lab can show it on purpose.
 * The JDK client itself has no per-host cap for HTTP/1.1. Blocking calls wait for a permit up to
 * the request timeout (then 504); async calls queue without holding a thread.
 */
final class CappedHttpClient extends HttpClient {

    private final HttpClient delegate;
    private final Semaphore permits;
    private final long waitMs;
    private final Queue<Runnable> waiting = new ConcurrentLinkedQueue<>();

    CappedHttpClient(HttpClient delegate, int maxConnections, long waitMs) {
        this.delegate = delegate;
        this.permits = new Semaphore(maxConnections);
        this.waitMs = waitMs;
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        if (!permits.tryAcquire(waitMs, TimeUnit.MILLISECONDS)) {
            throw new HttpTimeoutException("no free client connection within " + waitMs + " ms");
        }
        try {
            return delegate.send(request, handler);
        } finally {
            release();
        }
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        CompletableFuture<HttpResponse<T>> result = new CompletableFuture<>();
        waiting.add(() -> delegate.sendAsync(request, handler).whenComplete((response, failure) -> {
            release();
            if (failure != null) result.completeExceptionally(failure);
            else result.complete(response);
        }));
        startWaiting();
        return result;
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
            HttpResponse.PushPromiseHandler<T> push) {
        return sendAsync(request, handler);
    }

    private void release() {
        permits.release();
        startWaiting();
    }

    private void startWaiting() {
        while (!waiting.isEmpty() && permits.tryAcquire()) {
            Runnable next = waiting.poll();
            if (next == null) {
                permits.release();
            } else {
                next.run();
            }
        }
    }

    @Override public Optional<CookieHandler> cookieHandler() { return delegate.cookieHandler(); }
    @Override public Optional<Duration> connectTimeout() { return delegate.connectTimeout(); }
    @Override public Redirect followRedirects() { return delegate.followRedirects(); }
    @Override public Optional<ProxySelector> proxy() { return delegate.proxy(); }
    @Override public SSLContext sslContext() { return delegate.sslContext(); }
    @Override public SSLParameters sslParameters() { return delegate.sslParameters(); }
    @Override public Optional<Authenticator> authenticator() { return delegate.authenticator(); }
    @Override public Version version() { return delegate.version(); }
    @Override public Optional<Executor> executor() { return delegate.executor(); }
}
