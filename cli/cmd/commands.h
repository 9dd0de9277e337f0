/* commands.h - the cli's subcommands. Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the process exit
 * code (see cli/util/exitcode.h). */
#ifndef HI_CLI_COMMANDS_H
#define HI_CLI_COMMANDS_H

int cli_cmd_inject(int argc, char **argv);   /* cli/cmd/inject.c */
int cli_cmd_profile(int argc, char **argv);  /* cli/cmd/profile.c: heapinject -p PID */
int cli_cmd_attach(int argc, char **argv);   /* cli/cmd/attach.c */
int cli_cmd_snapshot(int argc, char **argv); /* cli/cmd/snapshot.c */
int cli_cmd_detach(int argc, char **argv);   /* cli/cmd/detach.c */
int cli_cmd_rate(int argc, char **argv);     /* cli/cmd/rate.c */
int cli_cmd_status(int argc, char **argv);   /* cli/cmd/status.c */
int cli_cmd_report(int argc, char **argv);   /* cli/cmd/report.c */
int cli_cmd_diff(int argc, char **argv);     /* cli/cmd/diff.c */
int cli_cmd_trim(int argc, char **argv);     /* cli/cmd/trim.c */
int cli_cmd_census(int argc, char **argv);   /* cli/cmd/census.c */

#endif /* HI_CLI_COMMANDS_H */
