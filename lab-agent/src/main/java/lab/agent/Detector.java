package lab.agent;

import java.util.List;
import java.util.regex.Pattern;

import javax.management.ObjectName;

/**
 * Which container serves the app, told from outside its code, first match wins:
 * <ol>
 *   <li>Tomcat: a {@code *:type=ThreadPool,*} bean of Tomcat's ({@code modelerType} an
 *       {@code org.apache.tomcat} endpoint; domain {@code Tomcat} embedded, {@code Catalina} standalone);</li>
 *   <li>Jetty: its pool's bean, {@code org.eclipse.jetty.util.thread:type=queuedthreadpool,*};</li>
 *   <li>Tomcat without beans (Spring Boot's default): live threads named {@code http-nio-<port>-Acceptor},
 *       {@code -Poller}, {@code -exec-<n>} (every request figure unknown, {@link Unseen#NO_TOMCAT_BEANS});</li>
 *   <li>Jetty without beans (the usual case): live threads named {@code qtp<digits>-<digits>}, the
 *       default name of a {@code QueuedThreadPool}'s threads;</li>
 *   <li>Reactor Netty: live threads named {@code reactor-http-nio-<n>} (or epoll...);</li>
 *   <li>else "unknown".</li>
 * </ol>
 * Bean checks come first: an app on Tomcat or Jetty may run Reactor Netty's client, whose loops have
 * the server's names. Looked for again on every read until a reader is {@link ContainerReader#settled()}
 * (found by its beans, and they are still there): the app starts its server after the agent's premain.
 */
final class Detector {

    /** Tomcat's endpoint threads: {@code http-nio-8080-exec-1}, {@code https-jsse-nio-8443-Acceptor}, {@code ajp-nio-...-Poller}. */
    static final Pattern TOMCAT_THREAD = Pattern.compile("(http|https-\\w+|ajp)-nio2?-.+-(Acceptor(-\\d+)?|Poller(-\\d+)?|exec-\\d+)");
    static final Pattern JETTY_THREAD = Pattern.compile("qtp\\d+-\\d+");

    private final Beans beans;
    private ContainerReader current = Unseen.none();

    Detector(Beans beans) {
        this.beans = beans;
    }

    /** The reader of the container now: the settled one found before, else whatever is found now. */
    synchronized ContainerReader current() {
        if (!current.settled()) current = detect();
        return current;
    }

    private ContainerReader detect() {
        String tomcat = tomcatDomain();
        if (tomcat != null) return new TomcatReader(beans, tomcat);
        if (!beans.query(JettyReader.POOLS).isEmpty()) return new JettyReader(beans);
        List<String> threads = Threads.names();
        if (any(threads, TOMCAT_THREAD)) return new Unseen("tomcat", Unseen.NO_TOMCAT_BEANS);
        if (any(threads, JETTY_THREAD)) return new Unseen("jetty", Unseen.NO_JETTY_BEAN);
        if (any(threads, NettyReader.LOOP)) return new NettyReader();
        return Unseen.none();
    }

    /** The JMX domain of Tomcat's ThreadPool beans, or null where there is none. */
    private String tomcatDomain() {
        for (ObjectName pool : beans.query("*:type=ThreadPool,*")) {
            if (beans.get(pool, "modelerType") instanceof String type && type.startsWith("org.apache.tomcat.")) return pool.getDomain();
        }
        return null;
    }

    private static boolean any(List<String> names, Pattern pattern) {
        for (String name : names) {
            if (pattern.matcher(name).matches()) return true;
        }
        return false;
    }
}
