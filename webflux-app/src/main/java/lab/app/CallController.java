package lab.app;

import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import reactor.core.publisher.Mono;

import lab.common.Remote;
import lab.common.Replies;

/**
 * WebFlux: a {@link Mono} from WebClient on the shared JDK client. The connector is set
 * explicitly; {@code WebClient.create()} would use Reactor Netty's own pool and its limits
 * (lab-notes traps 1 and 10).
 */
@RestController
public class CallController {

    private final Remote remote;
    private final WebClient client;

    public CallController(Remote remote) {
        this.remote = remote;
        JdkClientHttpConnector connector = new JdkClientHttpConnector(remote.client());
        connector.setReadTimeout(remote.timeout());
        this.client = WebClient.builder().clientConnector(connector).build();
    }

    @GetMapping("/call")
    public Mono<ResponseEntity<String>> get(@RequestParam(required = false) String ms) {
        return call(ms, -1);
    }

    @PostMapping("/call")
    public Mono<ResponseEntity<String>> post(@RequestParam(required = false) String ms, ServerHttpRequest request) {
        // The body streams in as buffers, read without blocking; count and release them.
        return request.getBody()
                .map(buffer -> {
                    long n = buffer.readableByteCount();
                    DataBufferUtils.release(buffer);
                    return n;
                })
                .reduce(0L, Long::sum)
                .flatMap(bytesRead -> call(ms, bytesRead));
    }

    private Mono<ResponseEntity<String>> call(String ms, long bytesRead) {
        remote.stats().handlerThread();
        Integer parsed;
        try {
            parsed = Remote.parseMs(ms);
        } catch (IllegalArgumentException e) {
            return Mono.just(reply(400, e.getMessage()));
        }
        return client.get().uri(remote.uri(parsed)).retrieve().bodyToMono(String.class)
                .doOnNext(body -> remote.stats().clientThread())
                .map(body -> reply(200, Replies.answer(body, bytesRead)))
                .onErrorResume(failure -> Mono.just(reply(Remote.statusFor(failure), Remote.reasonFor(failure))));
    }

    private static ResponseEntity<String> reply(int status, String text) {
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(text.endsWith("\n") ? text : text + "\n");
    }
}
