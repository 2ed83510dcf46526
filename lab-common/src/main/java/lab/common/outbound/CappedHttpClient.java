package lab.common.outbound;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * At most N exchanges with the remote at once: the connection pool that capped a public benchmark
 * at 14 % of its ceiling (docs/traps.md #1), made explicit so the lab can show it on purpose.
 * The JDK client itself has no per-host cap for HTTP/1.1. Calls queue for a permit without
 * holding a thread (a blocking {@link #send} waits on its own thread, as before); the request
 * timeout covers the wait, then 504.
 */
final class CappedHttpClient extends ForwardingHttpClient {

    private final Semaphore permits;
    private final long timeoutMs;
    private final Queue<BooleanSupplier> waiting = new ConcurrentLinkedQueue<>();

    CappedHttpClient(HttpClient delegate, int maxConnections, long timeoutMs) {
        super(delegate);
        this.permits = new Semaphore(maxConnections);
        this.timeoutMs = timeoutMs;
    }

    /** Blocking: the calling thread waits, exactly as for the uncapped client. */
    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        try {
            return sendAsync(request, handler).get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) throw io;
            if (cause instanceof TimeoutException) throw new HttpTimeoutException("no answer within " + timeoutMs + " ms");
            throw new IOException(cause);
        }
    }

    /**
     * Waiting for a free connection counts against the request timeout, as in a real pool; a
     * request whose caller gave up while it waited is never sent.
     */
    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        CompletableFuture<HttpResponse<T>> result = new CompletableFuture<HttpResponse<T>>().orTimeout(timeoutMs, TimeUnit.MILLISECONDS);
        waiting.add(() -> {
            if (result.isDone()) return false;
            CompletableFuture<HttpResponse<T>> sent;
            try {
                sent = delegate.sendAsync(request, handler);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
                return false;
            }
            result.whenComplete((response, failure) -> sent.cancel(true)); // timed out here: abort there
            sent.whenComplete((response, failure) -> {
                permits.release();
                startWaiting();
                if (failure != null) result.completeExceptionally(failure);
                else result.complete(response);
            });
            return true;
        });
        startWaiting();
        return result;
    }

    /** Starts queued exchanges while permits last; a start that sent nothing gives its permit back. */
    private void startWaiting() {
        while (!waiting.isEmpty() && permits.tryAcquire()) {
            BooleanSupplier next = waiting.poll();
            if (next == null || !next.getAsBoolean()) {
                permits.release();
            }
        }
    }
}
