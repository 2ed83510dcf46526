/**
 * {@link lab.common.outbound.Remote}, the one seam every model calls the backend through, and the
 * outbound HTTP clients behind it ({@code --client}: the JDK's, Reactor Netty's, Jetty's), with the
 * wrappers that cap or fix the JDK client and Spring's adapters on all three.
 */
package lab.common.outbound;
