/**
 * One app process's configuration: {@link lab.common.config.LabConfig} (and {@link
 * lab.common.config.DbConfig} for {@code --backend postgres}, {@link lab.common.config.WorkSpec}
 * for {@code --work}), its usage text, and the small parsers {@code LabConfig.parse} runs, one per
 * concern (server, client, fan-out, database, limits, work).
 */
package lab.common.config;
