package lab.app;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

import lab.common.Remote;
import lab.common.Replies;

/**
 * Spring MVC, blocking: RestClient on the shared JDK client. The request factory is set
 * explicitly; {@code RestClient.builder()} would pick Apache or Jetty's client if either were on
 * the classpath, with their own connection caps (lab-notes trap 10).
 */
@RestController
public class CallController {

    private final Remote remote;
    private final RestClient client;

    public CallController(Remote remote) {
        this.remote = remote;
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(remote.client());
        factory.setReadTimeout(remote.timeout());
        this.client = RestClient.builder().requestFactory(factory).build();
    }

    @GetMapping("/call")
    public ResponseEntity<String> get(@RequestParam(required = false) String ms) {
        return call(ms, -1);
    }

    @PostMapping("/call")
    public ResponseEntity<String> post(@RequestParam(required = false) String ms,
            @RequestBody(required = false) byte[] body) {
        return call(ms, body == null ? 0 : body.length);
    }

    private ResponseEntity<String> call(String ms, long bytesRead) {
        Integer parsed;
        try {
            parsed = Remote.parseMs(ms);
        } catch (IllegalArgumentException e) {
            return reply(400, e.getMessage());
        }
        try {
            String body = client.get().uri(remote.uri(parsed)).retrieve().body(String.class); // blocks this thread
            remote.stats().clientThread();
            return reply(200, Replies.answer(body, bytesRead));
        } catch (RestClientException e) {
            return reply(Remote.statusFor(e), Remote.reasonFor(e));
        }
    }

    private static ResponseEntity<String> reply(int status, String text) {
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(text.endsWith("\n") ? text : text + "\n");
    }
}
