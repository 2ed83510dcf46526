package lab.common.outbound;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.concurrent.Flow;
import java.util.function.Function;

import org.reactivestreams.Subscription;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpResponse;
import org.springframework.http.client.reactive.JdkClientHttpConnector;

import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;

/**
 * WebClient's connector on the shared JDK client ({@link JdkClientHttpConnector}, read timeout =
 * the client timeout), plus one fix: a call cancelled just as the remote's answer arrived leaves
 * nothing behind in the JDK client.
 *
 * <p>The leak it fixes (issue 18): Spring's connector sends with {@code BodyHandlers.ofPublisher()},
 * so the JDK future completes with the headers and the body waits for a subscriber. When the
 * caller cancels (on Netty, a client that leaves mid-request) after the future completed but
 * before the body was subscribed, Reactor's {@code Mono.fromCompletionStage} drops the response
 * as a <i>discarded</i> value. Nobody ever reads or cancels that body, so the JDK client keeps the
 * exchange as a pending operation for good: its count grows with every such race, and
 * {@code HttpClient.close()}, which waits for every operation, never returns. Here the discard hook
 * cancels the body, which ends the exchange (the connection is closed, the count drops).
 */
public final class JdkConnector implements ClientHttpConnector {

    private final JdkClientHttpConnector delegate;

    private JdkConnector(JdkClientHttpConnector delegate) {
        this.delegate = delegate;
    }

    /** The connector every WebClient in the lab uses: the shared client, its timeout. */
    public static ClientHttpConnector of(Remote remote) {
        JdkClientHttpConnector connector = new JdkClientHttpConnector(new CancelSafeHttpClient(remote.client()));
        connector.setReadTimeout(remote.timeout());
        return new JdkConnector(connector);
    }

    @Override
    public Mono<ClientHttpResponse> connect(HttpMethod method, URI uri,
            Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
        // A discard hook lives in the subscriber's context, so it reaches the operators upstream:
        // the fromCompletionStage inside Spring's connector, where the race drops the response.
        return delegate.connect(method, uri, requestCallback)
                .doOnDiscard(HttpResponse.class, JdkConnector::cancelBody)
                .doOnDiscard(ClientHttpResponse.class, response -> response.getBody().subscribe(new CancelAtOnce<>()));
    }

    /** Subscribes to a body nobody will read and cancels it: the JDK client then ends the exchange. */
    static void cancelBody(HttpResponse<?> response) {
        if (response.body() instanceof Flow.Publisher<?> body) {
            body.subscribe(new Flow.Subscriber<Object>() {
                @Override
                public void onSubscribe(Flow.Subscription subscription) {
                    subscription.cancel();
                }

                @Override
                public void onNext(Object item) {
                }

                @Override
                public void onError(Throwable throwable) {
                }

                @Override
                public void onComplete() {
                }
            });
        }
    }

    private static final class CancelAtOnce<T> extends BaseSubscriber<T> {
        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            subscription.cancel();
        }
    }
}
