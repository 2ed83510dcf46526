package lab.common.outbound;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The JDK client as WebClient sees it, with one race closed: a call cancelled just as the remote's
 * headers arrive must not leave its exchange behind (issue 18).
 *
 * <p>Measured on JDK 25 (and the same code on 17): {@code sendAsync(…, BodyHandlers.ofPublisher())}
 * cancelled with {@code cancel(true)} while the headers are being read can still go on to read
 * the body, into a body publisher that the cancelled future never hands out. Nobody can subscribe
 * to it, so the JDK client keeps that exchange (and its connection) as a pending operation for
 * good: 2 of 400 such cancels in a bare loop, and on Netty with clients that leave mid-request
 * the count grew by ~3-30 per burst of 100 and {@code HttpClient.close()} never returned. With
 * {@code ofString} the JDK reads the body itself and nothing is left.
 *
 * <p>Here every body subscriber is wrapped: the wrapper holds the JDK's side of the body
 * subscription, and when the caller's future was cancelled it cancels that subscription itself,
 * which ends the exchange (and closes its connection). While nobody cancels, it only forwards.
 */
final class CancelSafeHttpClient extends ForwardingHttpClient {

    CancelSafeHttpClient(HttpClient delegate) {
        super(delegate);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        Guard guard = new Guard();
        CompletableFuture<HttpResponse<T>> sent = delegate.sendAsync(request, info -> guard.wrap(handler.apply(info)));
        // Cancelling the future completes it at once, so this runs on every cancel, early or late.
        sent.whenComplete((response, failure) -> {
            if (sent.isCancelled()) guard.cancel();
        });
        return sent;
    }

    /** The JDK's side of one body subscription, cancelled when the caller gave up. */
    private static final class Guard {
        private final AtomicReference<Flow.Subscription> subscription = new AtomicReference<>();
        private volatile boolean cancelled;

        void cancel() {
            cancelled = true;
            Flow.Subscription s = subscription.get();
            if (s != null) s.cancel();
        }

        <T> HttpResponse.BodySubscriber<T> wrap(HttpResponse.BodySubscriber<T> inner) {
            return new HttpResponse.BodySubscriber<>() {
                @Override
                public CompletionStage<T> getBody() {
                    return inner.getBody();
                }

                @Override
                public void onSubscribe(Flow.Subscription s) {
                    subscription.set(s);
                    inner.onSubscribe(s);
                    if (cancelled) s.cancel();
                }

                @Override
                public void onNext(List<ByteBuffer> item) {
                    inner.onNext(item);
                }

                @Override
                public void onError(Throwable throwable) {
                    inner.onError(throwable);
                }

                @Override
                public void onComplete() {
                    inner.onComplete();
                }
            };
        }
    }
}
