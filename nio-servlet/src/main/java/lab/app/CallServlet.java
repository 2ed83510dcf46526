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

import lab.common.Remote;
import lab.common.Replies;

/**
 * Servlet 3.1: {@code startAsync()}; the POST body arrives through a {@link ReadListener} (bytes
 * are read only while {@code isReady()}), the remote is called without blocking, and the answer
 * leaves through a {@link WriteListener}. No step ever blocks a thread on I/O.
 */
public final class CallServlet extends HttpServlet {

    private final transient Remote remote;

    public CallServlet(Remote remote) {
        this.remote = remote;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        call(request.startAsync(), Remote.msFromQuery(request.getQueryString()), -1);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        AsyncContext async = request.startAsync();
        String ms = Remote.msFromQuery(request.getQueryString());
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
                call(async, ms, bytesRead);
            }

            @Override
            public void onError(Throwable failure) {
                async.complete(); // the client broke off its upload: nobody is left to answer
            }
        });
    }

    private void call(AsyncContext async, String rawMs, long bytesRead) {
        Integer ms;
        try {
            ms = Remote.parseMs(rawMs);
        } catch (IllegalArgumentException e) {
            write(async, 400, e.getMessage());
            return;
        }
        // The answer is handed back to a container thread with start(). Measured on Tomcat 11:
        // setWriteListener called on the client's thread runs the socket there, and then the
        // next request on that keep-alive connection too: application code outside the pool.
        remote.callAsync(ms).whenComplete((body, failure) -> async.start(() -> {
            if (failure == null) {
                write(async, 200, Replies.answer(body, bytesRead));
            } else {
                write(async, Remote.statusFor(failure), Remote.reasonFor(failure));
            }
        }));
    }

    /** Writes only while the container says the connection can take bytes, then completes. */
    private void write(AsyncContext async, int status, String text) {
        HttpServletResponse response = (HttpServletResponse) async.getResponse();
        byte[] body = Replies.bytes(text);
        response.setStatus(status);
        response.setContentType("text/plain;charset=utf-8");
        response.setContentLength(body.length);
        try {
            ServletOutputStream out = response.getOutputStream();
            out.setWriteListener(new WriteListener() {
                private boolean written;

                @Override
                public void onWritePossible() throws IOException {
                    remote.stats().handlerThread();
                    while (out.isReady()) {
                        if (written) {
                            async.complete();
                            return;
                        }
                        out.write(body);
                        written = true;
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
