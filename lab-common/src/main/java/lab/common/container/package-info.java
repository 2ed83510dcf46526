/**
 * The embedded containers behind {@link lab.common.container.Container}: Jetty, Tomcat and Reactor
 * Netty, each with its request pool pinned so that {@code --threads N} means the same on all.
 */
package lab.common.container;
