package lab.app;

import org.springframework.core.io.Resource;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import lab.common.Filler;
import lab.common.Replies;
import lab.common.SpringMvc;
import lab.common.outbound.Clients;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * Spring MVC, blocking: the backend through {@link Clients#blocking} — RestClient on the lab's
 * client ({@code --client}; the JDK's by default), its request factory set explicitly:
 * {@code RestClient.builder()} would pick Apache, Jetty or Reactor Netty's client from the
 * classpath, with their own connection caps (docs/traps.md #10); or JdbcClient on the Hikari pool
 * ({@code --backend postgres}). This thread waits for either.
 */
@RestController
public class CallController {

    private final Remote remote;
    private final Work work;
    private final Clients.Blocking client;

    public CallController(Remote remote) {
        this.remote = remote;
        this.work = remote.work();
        this.client = Clients.blocking(remote);
    }

    @GetMapping("/call")
    public ResponseEntity<Resource> get(@RequestParam(required = false) String ms,
            @RequestParam(required = false) String bytes) {
        return call(ms, bytes, -1);
    }

    @PostMapping("/call")
    public ResponseEntity<Resource> post(@RequestParam(required = false) String ms,
            @RequestParam(required = false) String bytes, @RequestBody(required = false) byte[] body) {
        return call(ms, bytes, body == null ? 0 : body.length);
    }

    private ResponseEntity<Resource> call(String ms, String bytes, long bytesRead) {
        Integer parsed;
        int filler;
        try {
            parsed = Remote.parseMs(ms);
            filler = Filler.parse(bytes);
        } catch (IllegalArgumentException e) {
            return reply(400, e.getMessage());
        }
        try {
            String body = client.call(parsed); // blocks this thread
            remote.stats().clientThread();
            work.run(); // --work: on this request thread, now the answer is here
            return reply(200, Replies.answer(body, bytesRead), filler);
        } catch (RuntimeException e) {
            return reply(Remote.statusFor(e), Remote.reasonFor(e));
        }
    }

    private static ResponseEntity<Resource> reply(int status, String text) {
        return reply(status, text, 0);
    }

    /** The text and {@code filler} bytes, written by MVC's Resource converter (see {@link SpringMvc#answer}). */
    private static ResponseEntity<Resource> reply(int status, String text, int filler) {
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(SpringMvc.answer(text, filler));
    }
}
