package lab.common.outbound;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.JettyClientHttpRequestFactory;
import org.springframework.http.client.ReactorClientHttpRequestFactory;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpResponse;
import org.springframework.http.client.reactive.JettyClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import reactor.core.publisher.Mono;

import lab.common.db.SpringDb;

/**
 * Spring's clients on the lab's one client ({@code --client}): what the MVC and WebFlux models
 * call the remote with, on the very client (pool, timeouts, threads) that {@link Remote} built.
 * The request factory and the connector are always set explicitly: {@code RestClient.builder()}
 * and {@code WebClient.builder()} pick Apache's, Jetty's or Reactor Netty's client by themselves
 * when one is on the classpath — and the app modules have Reactor Netty's and Jetty's now — each
 * on its own default pool (docs/traps.md #1 and #10).
 */
public final class Clients {

    private Clients() {
    }

    /** What a blocking MVC controller calls: the backend's answer, or a RuntimeException ({@link Remote#statusFor}). */
    @FunctionalInterface
    public interface Blocking {
        String call(Integer ms);
    }

    /** What a WebFlux controller calls: a Mono of the backend's answer. */
    @FunctionalInterface
    public interface Reactive {
        Mono<String> call(Integer ms);
    }

    /**
     * The blocking seam, one per backend: RestClient on the lab's HTTP client ({@code --backend http}),
     * or Spring's JdbcClient on the Hikari pool ({@code --backend postgres}; the sync apps take jdbc only).
     * The controller's thread waits either way: that is the model.
     */
    public static Blocking blocking(Remote remote) {
        if (remote.config().db() != null) return SpringDb.jdbcClient(remote);
        RestClient rest = restClient(remote);
        return ms -> rest.get().uri(remote.uri(ms)).retrieve().body(String.class);
    }

    /**
     * The reactive seam, one per backend: WebClient on the lab's HTTP client; or on postgres,
     * DatabaseClient on the r2dbc pool ({@code r2dbc}), or blocking JDBC on a bounded elastic
     * scheduler ({@code jdbc-elastic}, the trap). Each in its own class, so that only the chosen
     * one's libraries load.
     */
    public static Reactive reactive(Remote remote) {
        if (remote.config().db() == null) return WebClients.of(remote);
        return remote.config().db().driver().equals("r2dbc") ? SpringDb.databaseClient(remote) : SpringDb.elastic(remote);
    }

    /** WebClient on {@link #connector}: spring-webflux loads only here. */
    private static final class WebClients {
        static Reactive of(Remote remote) {
            WebClient web = WebClient.builder().clientConnector(connector(remote)).build();
            return ms -> web.get().uri(remote.uri(ms)).retrieve().bodyToMono(String.class);
        }
    }

    /** Blocking (sync MVC, and MVC on virtual threads): RestClient on the matching request factory. */
    public static RestClient restClient(Remote remote) {
        return RestClient.builder().requestFactory(requestFactory(remote))
                // Counted for the shutdown (Remote#awaitNoCalls): up to the answer's headers.
                .requestInterceptor((request, body, execution) -> {
                    remote.callStarted();
                    try {
                        return execution.execute(request, body);
                    } finally {
                        remote.callEnded();
                    }
                })
                .build();
    }

    static ClientHttpRequestFactory requestFactory(Remote remote) {
        Outbound out = remote.outbound();
        Duration connect = Duration.ofMillis(remote.config().clientConnectTimeoutMs());
        if (out instanceof ReactorNettyOutbound reactor) {
            ReactorClientHttpRequestFactory factory = new ReactorClientHttpRequestFactory(reactor.http());
            factory.setConnectTimeout(connect);
            factory.setReadTimeout(remote.timeout());
            return factory;
        }
        if (out instanceof JettyOutbound jetty) {
            JettyClientHttpRequestFactory factory = new JettyClientHttpRequestFactory(jetty.http());
            factory.setConnectTimeout(connect);
            factory.setReadTimeout(remote.timeout());
            return factory;
        }
        // The JDK client has its connect timeout built in; the read timeout is per request.
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(remote.client());
        factory.setReadTimeout(remote.timeout());
        return factory;
    }

    /** WebClient's connector ({@code WebClient.builder().clientConnector(...)}) on the matching client. */
    public static ClientHttpConnector connector(Remote remote) {
        Outbound out = remote.outbound();
        if (out instanceof ReactorNettyOutbound reactor) return timed(new ReactorClientHttpConnector(reactor.http()), remote);
        if (out instanceof JettyOutbound jetty) return timed(new JettyClientHttpConnector(jetty.http()), remote);
        return JdkConnector.of(remote);
    }

    /**
     * The JDK connector has the client timeout as its read timeout, for the whole exchange; Reactor
     * Netty's and Jetty's connectors have none that covers the wait for a pooled connection too.
     * This bounds {@code connect} (the exchange up to the answer's headers) by the client timeout
     * the same way: a {@link TimeoutException}, 504. And counts the exchange for the shutdown
     * ({@link Remote#awaitNoCalls}).
     */
    private static ClientHttpConnector timed(ClientHttpConnector connector, Remote remote) {
        Duration timeout = remote.timeout();
        return new ClientHttpConnector() {
            @Override
            public Mono<ClientHttpResponse> connect(HttpMethod method, URI uri,
                    Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
                return connector.connect(method, uri, requestCallback)
                        .timeout(timeout, Mono.error(() -> new TimeoutException("remote did not answer in " + timeout.toMillis() + " ms")))
                        .doFirst(remote::callStarted)
                        .doFinally(signal -> remote.callEnded());
            }
        };
    }
}
