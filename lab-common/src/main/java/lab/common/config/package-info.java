/**
 * One app process's configuration: {@link lab.common.config.LabConfig} (and {@link
 * lab.common.config.DbConfig} for {@code --backend postgres}), its usage text, and the small
 * parsers {@code LabConfig.parse} runs, one per concern (server, client, fan-out, database, limits).
 */
package lab.common.config;
