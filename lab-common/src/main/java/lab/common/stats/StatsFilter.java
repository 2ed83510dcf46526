package lab.common.stats;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

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
 *
 * <p>And the admission limit ({@code --max-in-flight}, {@link Admission}): on the REQUEST dispatch
 * a permit is taken before any application code runs, or the request is answered 503 at once.
 * The permit is given back exactly once, when the request has completed — the same two places
 * that count it finished: on return for a request that did not go async, in {@link Finish} for
 * one that did. The trap: releasing when {@code doFilter} returns. For an async request that is
 * the moment the container's thread is handed back, not the moment the request ends; every
 * permit would come back at once and an async server (or WebFlux mounted as a servlet, which is
 * async too) would hold any number of requests while reporting a limit of N.
 *
 * <p>One container does not always call {@link Finish}: Jetty 12.1 drops {@code onComplete} of an
 * async request whose answer failed to write because the client was gone (see
 * {@code SlowClientContract}). Its permit would then be held for good — N such clients and the
 * server answers nothing but 503. So a container may pass a {@code streamEnd} hook that runs a
 * task when the exchange has ended whatever happened (Jetty: its core request's completion
 * listener); the permit goes back on whichever of the two comes first, once.
 */
public final class StatsFilter implements Filter {

    private final Stats stats;
    private final Admission admission;
    private final long asyncTimeoutMs;
    private final BiConsumer<ServletRequest, Runnable> streamEnd;

    public StatsFilter(Stats stats, long asyncTimeoutMs) {
        this(stats, asyncTimeoutMs, null);
    }

    /**
     * @param streamEnd null, or how to run a task once the container has ended the request's
     *                  exchange in every case, failures included; it backs up the AsyncListener
     *                  for the admission permit only (Stats keep the listener's view)
     */
    public StatsFilter(Stats stats, long asyncTimeoutMs, BiConsumer<ServletRequest, Runnable> streamEnd) {
        this.stats = stats;
        this.admission = stats.admission();
        this.asyncTimeoutMs = asyncTimeoutMs;
        this.streamEnd = streamEnd;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        boolean first = request.getDispatcherType() == DispatcherType.REQUEST;
        // Only the REQUEST dispatch is admitted: an ASYNC dispatch belongs to a request that holds
        // its permit already. A refused request runs no application code and is not counted as
        // started or completed in Stats (Admission counts it as rejected).
        if (first && !admission.tryAcquire()) {
            reject((HttpServletResponse) response);
            return;
        }
        stats.handlerThread();
        if (first) stats.requestStarted();
        int status = 500;
        try {
            chain.doFilter(request, response);
            status = ((HttpServletResponse) response).getStatus();
        } finally {
            if (request.isAsyncStarted()) {
                // Completion may already be pending on another thread; the container delivers
                // onComplete after this dispatch returns, so the listener is never too late.
                // NOT admission.release() here: this thread is done, the request is not (see above).
                if (first) {
                    try {
                        AsyncContext async = request.getAsyncContext();
                        // One explicit async timeout for every model, above the client's, so a slow
                        // remote ends as the client's 504 rather than the container's default 30 s.
                        async.setTimeout(asyncTimeoutMs);
                        Finish finish = new Finish();
                        async.addListener(finish, request, response);
                        if (streamEnd != null && admission.enabled()) streamEnd.accept(request, finish::releasePermit);
                    } catch (IllegalStateException e) {
                        // The request left async mode between the check and here (completed on
                        // another thread): no listener will be called, so it ends now, or its
                        // count and its permit would be held for good.
                        stats.requestFinished(status);
                        admission.release();
                    }
                }
            } else if (first) {
                stats.requestFinished(status);
                admission.release(); // not async: returning is completing
            }
        }
    }

    /** 503 at once, from the container's thread, with no application code: a few bytes, no body read. */
    private void reject(HttpServletResponse response) throws IOException {
        byte[] body = admission.rejection();
        response.setStatus(Admission.STATUS);
        response.setContentType("text/plain;charset=utf-8");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    private final class Finish implements AsyncListener {
        // Tomcat 11 delivers onComplete twice after an async timeout (once from the timeout's
        // internal dispatch, once from post-processing); count each request once, and give its
        // admission permit back once: a second release would raise the limit for good.
        // A timeout or an error ends here too: the container calls onComplete after both.
        private final AtomicBoolean finished = new AtomicBoolean();
        private final AtomicBoolean permitHeld = new AtomicBoolean(true);
        private volatile boolean timedOut;

        /** Here or from the container's {@code streamEnd} hook, whichever is first; once. */
        void releasePermit() {
            if (permitHeld.compareAndSet(true, false)) admission.release();
        }

        @Override
        public void onComplete(AsyncEvent event) {
            if (finished.compareAndSet(false, true)) {
                int status = ((HttpServletResponse) event.getSuppliedResponse()).getStatus();
                // An adapter may complete a timed-out request with its untouched 200: still an error.
                stats.requestFinished(timedOut ? Math.max(status, 503) : status);
                releasePermit();
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
