package lab.agent;

import java.util.List;

/**
 * A container whose requests the agent cannot see: none it knows is in this JVM, or one is, found by
 * its threads' names, that published no beans. Every request figure is unknown, for one reason said
 * once for each; the JVM's own figures are read as always. Never settled: {@link Detector} keeps
 * looking, since an app starts its server after the agent's premain, and may publish beans later.
 */
final class Unseen implements ContainerReader {

    static final String NO_CONTAINER = "no Tomcat, Jetty or Netty found in this JVM (Undertow?)";
    static final String NO_JETTY_BEAN = "no Jetty MBean (the app adds no MBeanContainer): its QueuedThreadPool is not visible from outside";
    /**
     * Spring Boot calls Tomcat's {@code Registry.disableRegistry()} unless
     * {@code server.tomcat.mbeanregistry.enabled=true}: its Tomcat then registers no bean at all.
     */
    static final String NO_TOMCAT_BEANS = "no Tomcat MBeans (Spring Boot disables Tomcat's MBean registry unless"
            + " server.tomcat.mbeanregistry.enabled=true: add --server.tomcat.mbeanregistry.enabled=true to APP_ARGS)";

    /** What an unseen container's answer lacks: all of it. */
    static final List<String> REQUEST_FIGURES = List.of("threads", "inFlight", "queued", "maxInFlight", "completed", "errors",
            "handlerThreads", "pool");

    private final String name;
    private final String why;

    Unseen(String name, String why) {
        this.name = name;
        this.why = why;
    }

    static Unseen none() {
        return new Unseen("unknown", NO_CONTAINER);
    }

    @Override
    public String name() {
        return name;
    }

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
        out.unknown(REQUEST_FIGURES, why);
    }

    @Override
    public void reset() {
        // nothing counted here
    }
}
