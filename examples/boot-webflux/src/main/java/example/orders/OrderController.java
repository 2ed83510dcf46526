package example.orders;

import java.net.URI;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;

/**
 * An order lookup, written the way a user writes a Spring WebFlux service: the service under test
 * that the lab starts as a foreign jar, whose every request waits on a slow downstream. It is the
 * reactive twin of the boot-service example (Spring MVC on Tomcat).
 *
 * <p>{@code GET /orders/{id}} calls the downstream at {@code downstream.url} (a required property,
 * with no default: the app does not start without it) through a {@link WebClient} built from
 * Boot's auto-configured {@link WebClient.Builder}, so Boot picks the HTTP client, its connection
 * pool and its timeouts as a user gets them by default. It answers 200 text/plain
 * {@code order <id>: <downstream body>}, or 502 with a one-line reason when the downstream fails
 * or answers non-2xx. It never blocks: Reactor Netty's event loops serve every request, and no
 * thread waits for the downstream.
 *
 * <p>Boot builds the {@link WebClient} on Reactor Netty's client, which shares the server's event
 * loops and Reactor Netty's global connection pool, with no response timeout unless
 * {@code spring.http.clients.read-timeout} is set.
 *
 * <pre>
 * HOW TO RUN
 *   java -jar target/boot-webflux.jar --server.port=8080 --downstream.url=http://127.0.0.1:9000/sleep?ms=1000
 *   curl http://127.0.0.1:8080/orders/42
 * </pre>
 */
@RestController
public class OrderController {

    private final WebClient downstream;
    private final URI downstreamUrl;

    public OrderController(WebClient.Builder builder, @Value("${downstream.url}") String downstreamUrl) {
        this.downstream = builder.build();
        this.downstreamUrl = URI.create(downstreamUrl);
    }

    @GetMapping(path = "/orders/{id}", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> order(@PathVariable String id, ServerHttpResponse response) {
        return downstream.get().uri(downstreamUrl).retrieve().toEntity(String.class)
                .map(answer -> {
                    if (!answer.getStatusCode().is2xxSuccessful()) {
                        return badGateway(response, "downstream answered " + answer.getStatusCode().value());
                    }
                    String body = answer.getBody();
                    return "order " + id + ": " + (body == null ? "" : body);
                })
                .onErrorResume(WebClientResponseException.class, // 4xx and 5xx
                        e -> Mono.just(badGateway(response, "downstream answered " + e.getStatusCode().value())))
                .onErrorResume(e -> Mono.just(badGateway(response, "downstream failed: " + oneLine(e))));
    }

    private static String badGateway(ServerHttpResponse response, String reason) {
        response.setStatusCode(HttpStatus.BAD_GATEWAY);
        return reason + "\n";
    }

    /** The exception and its causes on one line, e.g. {@code WebClientRequestException: ... <- ConnectException: ...}. */
    private static String oneLine(Throwable e) {
        StringBuilder reason = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (reason.length() > 0) {
                reason.append(" <- ");
            }
            reason.append(t.getClass().getSimpleName());
            if (t.getMessage() != null) {
                reason.append(": ").append(t.getMessage());
            }
        }
        return reason.toString().replaceAll("\\s+", " ");
    }
}
