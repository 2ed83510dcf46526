/**
 * The lab's Java agent, and how the lab reads a JVM, whoever wrote the app in it.
 * <ul>
 *   <li>{@link lab.agent.LabAgent}: {@code -javaagent:lab-agent/target/lab-agent.jar=port=8081,app=NAME};
 *       its arguments ({@code AgentArgs}), its admin port ({@code AgentServer}) and its /stats
 *       ({@code AgentStats}), read from the container's beans ({@code Detector} and a reader per
 *       container) by a sampler thread ({@code Sampler});</li>
 *   <li>what lab-common's own apps use too: {@link lab.agent.Jvm} and {@link lab.agent.JvmCpu} (the
 *       JVM's figures in every /stats), {@link lab.agent.AdminAccess} (the run's token) and
 *       {@link lab.agent.Json}.</li>
 * </ul>
 * JDK only (java.management, jdk.management, jdk.httpserver, java.instrument): the agent's jar joins
 * a foreign app's class path, and must bring nothing that could clash with the app's libraries.
 */
package lab.agent;
