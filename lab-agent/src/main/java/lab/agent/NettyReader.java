package lab.agent;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Reactor Netty (Spring WebFlux's default server), found by its event loops' names: Reactor Netty's
 * default {@code LoopResources} name them {@code reactor-http-nio-<n>} ({@code -epoll-}, {@code -kqueue-},
 * {@code -io_uring-} on the native transports). {@code threads} is how many there are: the loops run
 * every request, as lab-common's Netty apps' {@code --threads N} does. Reactor Netty publishes no bean
 * of its requests (its Micrometer metrics are the app's to turn on and export), so every request
 * figure is unknown. The app's WebClient shares these loops by default: they are counted all the same.
 */
final class NettyReader implements ContainerReader {

    static final Pattern LOOP = Pattern.compile("reactor-http-(nio|epoll|kqueue|io_uring)-\\d+");
    static final String NO_COUNTS = "Reactor Netty publishes no request counts as beans";

    @Override
    public String name() {
        return "netty";
    }

    /** Found by names only: looked for again on every read (the loops are made lazily, and may go). */
    @Override
    public boolean settled() {
        return false;
    }

    @Override
    public Sample sample(int namesSeen) {
        return Sample.NONE;
    }

    @Override
    public void read(Reading out, Sample now, Sampler.Peaks peaks) {
        int loops = Threads.count(LOOP);
        out.threads(Integer.toString(loops));
        out.pool("source", "live threads named like " + LOOP.pattern());
        out.pool("executor", "event-loop");
        out.pool("loops", loops);
        out.unknown(List.of("inFlight", "queued", "maxInFlight", "completed", "errors"), NO_COUNTS);
        out.unknown("handlerThreads", NO_COUNTS + ": which loop ran a request is not visible from outside");
    }

    @Override
    public void reset() {
        // nothing counted here
    }
}
