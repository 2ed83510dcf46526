package lab.common;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Counts every request in and out and records which container thread entered application code,
 * for every model alike. Mapped for REQUEST and ASYNC dispatches (an async dispatch is a container
 * thread running application code too); a request that went async is finished by its
 * {@link AsyncListener}, so in-flight counts stay true however the model completes it.
 */
public final class StatsFilter implements Filter {

    private final Stats stats;
    private final long asyncTimeoutMs;

    public StatsFilter(Stats stats, long asyncTimeoutMs) {
        this.stats = stats;
        this.asyncTimeoutMs = asyncTimeoutMs;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        stats.handlerThread();
        boolean first = request.getDispatcherType() == DispatcherType.REQUEST;
        if (first) stats.requestStarted();
        int status = 500;
        try {
            chain.doFilter(request, response);
            status = ((HttpServletResponse) response).getStatus();
        } finally {
            if (request.isAsyncStarted()) {
                // Completion may already be pending on another thread; the container delivers
                // onComplete after this dispatch returns, so the listener is never too late.
                if (first) {
                    AsyncContext async = request.getAsyncContext();
                    // One explicit async timeout for every model, above the client's, so a slow
                    // remote ends as the client's 504 rather than the container's default 30 s.
                    async.setTimeout(asyncTimeoutMs);
                    async.addListener(new Finish(), request, response);
                }
            } else if (first) {
                stats.requestFinished(status);
            }
        }
    }

    private final class Finish implements AsyncListener {
        // Tomcat 11 delivers onComplete twice after an async timeout (once from the timeout's
        // internal dispatch, once from post-processing); count each request once.
        private final AtomicBoolean finished = new AtomicBoolean();
        private volatile boolean timedOut;

        @Override
        public void onComplete(AsyncEvent event) {
            if (finished.compareAndSet(false, true)) {
                int status = ((HttpServletResponse) event.getSuppliedResponse()).getStatus();
                // An adapter may complete a timed-out request with its untouched 200: still an error.
                stats.requestFinished(timedOut ? Math.max(status, 503) : status);
            }
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            timedOut = true; // onComplete follows once the container has answered
        }

        @Override
        public void onError(AsyncEvent event) {
            // onComplete follows; a broken connection is not a server error by itself.
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this, event.getSuppliedRequest(), event.getSuppliedResponse());
        }
    }
}
