package lab.app;

import java.util.concurrent.CompletableFuture;

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
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * Spring MVC async: returning a {@link CompletableFuture} makes the DispatcherServlet call
 * {@code startAsync()} and release the thread; when the future completes (on a client-N thread)
 * Spring dispatches back to a container thread to write the answer. Needs async support on the
 * servlet and every filter (docs/traps.md #8), or it silently stays synchronous. The bodies stay
 * blocking (trap 18): {@code @RequestBody} is read before this controller runs, and the answer is
 * written by a converter on the dispatch's container thread.
 */
@RestController
public class CallController {

    private final Remote remote;
    private final Work work;

    public CallController(Remote remote) {
        this.remote = remote;
        this.work = remote.work();
    }

    @GetMapping("/call")
    public CompletableFuture<ResponseEntity<Resource>> get(@RequestParam(required = false) String ms,
            @RequestParam(required = false) String bytes) {
        return call(ms, bytes, -1);
    }

    @PostMapping("/call")
    public CompletableFuture<ResponseEntity<Resource>> post(@RequestParam(required = false) String ms,
            @RequestParam(required = false) String bytes, @RequestBody(required = false) byte[] body) {
        return call(ms, bytes, body == null ? 0 : body.length);
    }

    private CompletableFuture<ResponseEntity<Resource>> call(String ms, String bytes, long bytesRead) {
        Integer parsed;
        int filler;
        try {
            parsed = Remote.parseMs(ms);
            filler = Filler.parse(bytes);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(reply(400, e.getMessage()));
        }
        return remote.callAsync(parsed).handle((body, failure) -> {
            if (failure != null) return reply(Remote.statusFor(failure), Remote.reasonFor(failure));
            work.run(); // --work: where the future completes (a client-N thread), before Spring's dispatch
            return reply(200, Replies.answer(body, bytesRead), filler);
        });
    }

    private static ResponseEntity<Resource> reply(int status, String text) {
        return reply(status, text, 0);
    }

    /** The text and {@code filler} bytes, written by MVC's Resource converter (see {@link SpringMvc#answer}). */
    private static ResponseEntity<Resource> reply(int status, String text, int filler) {
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(SpringMvc.answer(text, filler));
    }
}
