/**
 * What proves the model, served as {@code /stats}: {@link lab.common.stats.Stats}, the filter
 * (servlet containers) and handler (Reactor Netty) that count every request and apply {@code
 * --max-in-flight} ({@link lab.common.stats.Admission}), and the JVM's compiler CPU.
 */
package lab.common.stats;
