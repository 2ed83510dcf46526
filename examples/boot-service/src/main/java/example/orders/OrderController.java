package example.orders;

import java.net.URI;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestClientResponseException;

/**
 * An order lookup, written the way a user writes a Spring MVC service: the service under test that
 * the lab starts as a foreign jar, whose every request waits on a slow downstream.
 *
 * <p>{@code GET /orders/{id}} calls the downstream at {@code downstream.url} (a required property,
 * with no default: the app does not start without it) through a {@link RestClient} built from
 * Boot's auto-configured {@link RestClient.Builder}, so Boot picks the HTTP client and its
 * timeouts as a user gets them by default. It answers 200 text/plain
 * {@code order <id>: <downstream body>}, or 502 with a one-line reason when the downstream fails
 * or answers non-2xx. It blocks: one Tomcat platform thread per request
 * ({@code --server.tomcat.threads.max}), or a virtual thread per request with
 * {@code --spring.threads.virtual.enabled=true} (Java 21+; Java 17 ignores it).
 *
 * <p>With no other HTTP client on the classpath, Boot builds the {@link RestClient} on the JDK's
 * {@code java.net.http.HttpClient}, with no connect or read timeout unless
 * {@code spring.http.clients.connect-timeout} / {@code spring.http.clients.read-timeout} are set.
 *
 * <pre>
 * HOW TO RUN
 *   java -jar target/boot-service.jar --server.port=8080 --downstream.url=http://127.0.0.1:9000/sleep?ms=1000
 *   curl http://127.0.0.1:8080/orders/42
 * </pre>
 */
@RestController
public class OrderController {

    private final RestClient downstream;
    private final URI downstreamUrl;

    public OrderController(RestClient.Builder builder, @Value("${downstream.url}") String downstreamUrl) {
        this.downstream = builder.build();
        this.downstreamUrl = URI.create(downstreamUrl);
    }

    @GetMapping(path = "/orders/{id}", produces = MediaType.TEXT_PLAIN_VALUE)
    public ResponseEntity<String> order(@PathVariable String id) {
        try {
            ResponseEntity<String> answer = downstream.get().uri(downstreamUrl).retrieve().toEntity(String.class);
            if (!answer.getStatusCode().is2xxSuccessful()) {
                return badGateway("downstream answered " + answer.getStatusCode().value());
            }
            String body = answer.getBody();
            return ResponseEntity.ok("order " + id + ": " + (body == null ? "" : body));
        } catch (RestClientResponseException e) { // 4xx and 5xx
            return badGateway("downstream answered " + e.getStatusCode().value());
        } catch (RestClientException e) {
            return badGateway("downstream failed: " + oneLine(e));
        }
    }

    private static ResponseEntity<String> badGateway(String reason) {
        return ResponseEntity.status(HttpStatus.BAD_GATEWAY).contentType(MediaType.TEXT_PLAIN).body(reason + "\n");
    }

    /** The exception's causes on one line, e.g. {@code ConnectException <- ClosedChannelException}. */
    private static String oneLine(Throwable e) {
        StringBuilder reason = new StringBuilder();
        for (Throwable t = e.getCause() != null ? e.getCause() : e; t != null; t = t.getCause() == t ? null : t.getCause()) {
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
