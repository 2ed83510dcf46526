package lab.app;

import java.util.concurrent.CompletableFuture;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import lab.common.Remote;
import lab.common.Replies;

/**
 * Spring MVC async: returning a {@link CompletableFuture} makes the DispatcherServlet call
 * {@code startAsync()} and release the thread; when the future completes (on a client-N thread)
 * Spring dispatches back to a container thread to write the answer. Needs async support on the
 * servlet and every filter (lab-notes trap 8), or it silently stays synchronous.
 */
@RestController
public class CallController {

    private final Remote remote;

    public CallController(Remote remote) {
        this.remote = remote;
    }

    @GetMapping("/call")
    public CompletableFuture<ResponseEntity<String>> get(@RequestParam(required = false) String ms) {
        return call(ms, -1);
    }

    @PostMapping("/call")
    public CompletableFuture<ResponseEntity<String>> post(@RequestParam(required = false) String ms,
            @RequestBody(required = false) byte[] body) {
        return call(ms, body == null ? 0 : body.length);
    }

    private CompletableFuture<ResponseEntity<String>> call(String ms, long bytesRead) {
        Integer parsed;
        try {
            parsed = Remote.parseMs(ms);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(reply(400, e.getMessage()));
        }
        return remote.callAsync(parsed).handle((body, failure) -> failure == null
                ? reply(200, Replies.answer(body, bytesRead))
                : reply(Remote.statusFor(failure), Remote.reasonFor(failure)));
    }

    private static ResponseEntity<String> reply(int status, String text) {
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(text.endsWith("\n") ? text : text + "\n");
    }
}
