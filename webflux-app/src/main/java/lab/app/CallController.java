package lab.app;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import lab.common.Filler;
import lab.common.Replies;
import lab.common.outbound.Clients;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * WebFlux: a {@link Mono} from the backend through {@link Clients#reactive} — WebClient on the
 * lab's client ({@code --client}; the JDK's by default, Reactor Netty's on its own pool, or
 * Jetty's), its connector set explicitly: {@code WebClient.create()} would use Reactor Netty's
 * shared pool and its limits (docs/traps.md #1 and #10); or, on {@code --backend postgres},
 * DatabaseClient on the r2dbc pool, or JDBC on a bounded elastic scheduler (the trap). The answer is a stream of buffers: WebFlux writes each one only
 * when the connection can take it (a Servlet 3.1 WriteListener underneath) and asks for the next
 * one after that, so a slow reader holds no thread and no more than a chunk or two in memory.
 */
@RestController
public class CallController {

    private final Remote remote;
    private final Work work;
    private final Clients.Reactive client;

    public CallController(Remote remote) {
        this.remote = remote;
        this.work = remote.work();
        // The lab's client, its timeout, and (JDK) nothing left behind by a call cancelled mid-answer.
        this.client = Clients.reactive(remote);
    }

    @GetMapping("/call")
    public Mono<ResponseEntity<Flux<DataBuffer>>> get(@RequestParam(required = false) String ms,
            @RequestParam(required = false) String bytes) {
        return call(ms, bytes, -1);
    }

    @PostMapping("/call")
    public Mono<ResponseEntity<Flux<DataBuffer>>> post(@RequestParam(required = false) String ms,
            @RequestParam(required = false) String bytes, ServerHttpRequest request) {
        // The body streams in as buffers, read without blocking; count and release them.
        return request.getBody()
                .map(buffer -> {
                    long n = buffer.readableByteCount();
                    DataBufferUtils.release(buffer);
                    return n;
                })
                .reduce(0L, Long::sum)
                .flatMap(bytesRead -> call(ms, bytes, bytesRead));
    }

    private Mono<ResponseEntity<Flux<DataBuffer>>> call(String ms, String bytes, long bytesRead) {
        remote.stats().handlerThread();
        Integer parsed;
        int filler;
        try {
            parsed = Remote.parseMs(ms);
            filler = Filler.parse(bytes);
        } catch (IllegalArgumentException e) {
            return Mono.just(reply(400, e.getMessage()));
        }
        return client.call(parsed)
                .doOnNext(body -> remote.stats().clientThread())
                .map(body -> {
                    work.run(); // --work: on the thread that delivered the answer (the chain runs there)
                    return reply(200, Replies.answer(body, bytesRead), filler);
                })
                .onErrorResume(failure -> Mono.just(reply(Remote.statusFor(failure), Remote.reasonFor(failure))));
    }

    private static ResponseEntity<Flux<DataBuffer>> reply(int status, String text) {
        return reply(status, text, 0);
    }

    /**
     * The text, then {@code filler} bytes as read-only views of the shared chunk, made one at a
     * time as the writer asks for them. Content-Length is set here: WebFlux knows it by itself only
     * for a single-value body.
     */
    private static ResponseEntity<Flux<DataBuffer>> reply(int status, String text, int filler) {
        byte[] head = Replies.bytes(text);
        Flux<DataBuffer> chunks = Flux.generate(() -> (long) filler, (left, sink) -> {
            if (left == 0) {
                sink.complete();
                return 0L;
            }
            DataBuffer chunk = DefaultDataBufferFactory.sharedInstance.wrap(Filler.chunk(left));
            sink.next(chunk);
            return left - chunk.readableByteCount();
        });
        Flux<DataBuffer> body = Flux.concat(Mono.fromSupplier(() -> DefaultDataBufferFactory.sharedInstance.wrap(head)), chunks);
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).contentLength(head.length + (long) filler).body(body);
    }
}
