package lab.app;

import java.io.IOException;
import java.io.OutputStream;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Filler;
import lab.common.Replies;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * Servlet 3.0 async: {@code startAsync()}, then the client's callback writes the answer and
 * completes. 3.0 has no non-blocking I/O: the body of a POST is read blocking on the container
 * thread, and the answer is written blocking on the callback's {@code client-N} thread, which a
 * slowly reading client then holds (the client's executor has only a few).
 */
public final class CallServlet extends HttpServlet {

    private final transient Remote remote;
    private final transient Work work;

    public CallServlet(Remote remote) {
        this.remote = remote;
        this.work = remote.work();
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
        int filler;
        try {
            ms = Remote.parseMs(Remote.msFromQuery(request.getQueryString()));
            filler = Filler.parse(Filler.fromQuery(request.getQueryString()));
        } catch (IllegalArgumentException e) {
            Replies.send(response, 400, e.getMessage());
            return;
        }
        AsyncContext async = request.startAsync();
        // This container thread returns now; a client-N thread finishes the request.
        remote.callAsync(ms).whenComplete((body, failure) -> {
            try {
                if (failure == null) {
                    work.run(); // --work: on the callback's thread, which completes the request
                    Replies.send(response, 200, Replies.answer(body, bytesRead), filler);
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
