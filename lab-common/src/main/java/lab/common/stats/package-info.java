/**
 * What proves the model, served as {@code /stats}: {@link lab.common.stats.Stats}, the filter
 * (servlet containers) and handler (Reactor Netty) that count every request and apply {@code
 * --max-in-flight} ({@link lab.common.stats.Admission}). The JVM's own figures (threads, heap, the
 * compiler's CPU) are read by {@link lab.agent.Jvm}, as the lab's Java agent reads them in any JVM.
 */
package lab.common.stats;
