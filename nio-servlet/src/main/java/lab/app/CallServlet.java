package lab.app;

import java.io.IOException;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Filler;
import lab.common.Replies;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * Servlet 3.1: {@code startAsync()}; the POST body arrives through a {@link ReadListener} (bytes
 * are read only while {@code isReady()}), the remote is called without blocking, and the answer
 * leaves through a {@link WriteListener}. No step ever blocks a thread on I/O.
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
        call(request.startAsync(), request.getQueryString(), -1);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        AsyncContext async = request.startAsync();
        String query = request.getQueryString();
        ServletInputStream in = request.getInputStream();
        in.setReadListener(new ReadListener() {
            private final byte[] buffer = new byte[8192];
            private long bytesRead;

            @Override
            public void onDataAvailable() throws IOException {
                remote.stats().handlerThread();
                while (in.isReady() && !in.isFinished()) {
                    int n = in.read(buffer);
                    if (n > 0) bytesRead += n;
                }
            }

            @Override
            public void onAllDataRead() {
                remote.stats().handlerThread();
                call(async, query, bytesRead);
            }

            @Override
            public void onError(Throwable failure) {
                async.complete(); // the client broke off its upload: nobody is left to answer
            }
        });
    }

    /** Parameters come from the query string only: {@code getParameter} could read a form body blocking. */
    private void call(AsyncContext async, String query, long bytesRead) {
        Integer ms;
        int filler;
        try {
            ms = Remote.parseMs(Remote.msFromQuery(query));
            filler = Filler.parse(Filler.fromQuery(query));
        } catch (IllegalArgumentException e) {
            write(async, 400, e.getMessage(), 0);
            return;
        }
        // The answer is handed back to a container thread with start(). Measured on Tomcat 11:
        // setWriteListener called on the client's thread runs the socket there, and then the
        // next request on that keep-alive connection too: application code outside the pool.
        remote.callAsync(ms).whenComplete((body, failure) -> async.start(() -> {
            if (failure == null) {
                work.run(); // --work: on the container thread start() handed the answer to
                write(async, 200, Replies.answer(body, bytesRead), filler);
            } else {
                write(async, Remote.statusFor(failure), Remote.reasonFor(failure), 0);
            }
        }));
    }

    /**
     * The text, then {@code filler} bytes one chunk at a time, each only while the container says
     * the connection can take bytes; then completes. A slow reader holds no thread: when
     * {@code isReady()} says no, this returns and the container calls again when the socket drains.
     */
    private void write(AsyncContext async, int status, String text, int filler) {
        HttpServletResponse response = (HttpServletResponse) async.getResponse();
        byte[] body = Replies.bytes(text);
        response.setStatus(status);
        response.setContentType("text/plain;charset=utf-8");
        response.setContentLengthLong(body.length + (long) filler);
        try {
            ServletOutputStream out = response.getOutputStream();
            out.setWriteListener(new WriteListener() {
                private boolean textWritten;
                private long fillerLeft = filler;

                @Override
                public void onWritePossible() throws IOException {
                    remote.stats().handlerThread();
                    while (out.isReady()) {
                        if (!textWritten) {
                            out.write(body);
                            textWritten = true;
                        } else if (fillerLeft > 0) {
                            fillerLeft -= Filler.writeChunk(out, fillerLeft);
                        } else {
                            async.complete();
                            return;
                        }
                    }
                }

                @Override
                public void onError(Throwable failure) {
                    async.complete();
                }
            });
        } catch (IOException | IllegalStateException e) {
            async.complete();
        }
    }
}
