package lab.app;

import java.io.IOException;
import java.io.OutputStream;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Remote;
import lab.common.Replies;

/**
 * Servlet 3.0 async: {@code startAsync()}, then the client's callback writes the answer and
 * completes. The body of a POST is still read blocking (3.0 has no non-blocking reads).
 */
public final class CallServlet extends HttpServlet {

    private final transient Remote remote;

    public CallServlet(Remote remote) {
        this.remote = remote;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        call(request, response, -1);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        long bytesRead = request.getInputStream().transferTo(OutputStream.nullOutputStream());
        call(request, response, bytesRead);
    }

    private void call(HttpServletRequest request, HttpServletResponse response, long bytesRead) throws IOException {
        Integer ms;
        try {
            ms = Remote.parseMs(request.getParameter("ms"));
        } catch (IllegalArgumentException e) {
            Replies.send(response, 400, e.getMessage());
            return;
        }
        AsyncContext async = request.startAsync();
        // This container thread returns now; a client-N thread finishes the request.
        remote.callAsync(ms).whenComplete((body, failure) -> {
            try {
                if (failure == null) {
                    Replies.send(response, 200, Replies.answer(body, bytesRead));
                } else {
                    Replies.send(response, Remote.statusFor(failure), Remote.reasonFor(failure));
                }
            } catch (IOException | IllegalStateException e) {
                // The client went away, or the container already ended the request (async
                // timeout): nothing left to tell anyone.
            } finally {
                async.complete();
            }
        });
    }
}
