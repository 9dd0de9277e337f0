/* Unit tests for inj_gdb_received_signal (injector/gdb.c): the lines gdb
 * prints when a signal stops its call, which the cli must recognise to
 * send the signal again (gdb keeps it), and lines it must not take. */
#include <criterion/criterion.h>
#include <signal.h>

#include "injector/gdb.h"

Test(gdb_signal, one_thread_program)
{
    cr_assert_eq(inj_gdb_received_signal("Program received signal SIGUSR1, User defined signal 1."), SIGUSR1);
    cr_assert_eq(inj_gdb_received_signal("Program received signal SIGTERM, Terminated."), SIGTERM);
    cr_assert_eq(inj_gdb_received_signal("Program received signal SIGCHLD, Child status changed."), SIGCHLD);
}

Test(gdb_signal, named_thread)
{
    cr_assert_eq(inj_gdb_received_signal("Thread 1 \"inj_wait\" received signal SIGUSR2, User defined signal 2."),
                 SIGUSR2);
    cr_assert_eq(inj_gdb_received_signal("Thread 3 \"worker, pool\" received signal SIGHUP, Hangup."), SIGHUP);
}

Test(gdb_signal, real_time_by_number)
{
    cr_assert_eq(inj_gdb_received_signal("Program received signal SIG35, Real-time event 35."), 35);
    cr_assert_eq(inj_gdb_received_signal("Thread 2 \"x\" received signal SIG64, Real-time event 64."), 64);
    cr_assert_eq(inj_gdb_received_signal("Program received signal SIG65, Unknown signal."), 0);
}

Test(gdb_signal, other_lines)
{
    cr_assert_eq(inj_gdb_received_signal(""), 0);
    cr_assert_eq(inj_gdb_received_signal("Program terminated with signal SIGUSR1, User defined signal 1."), 0);
    cr_assert_eq(inj_gdb_received_signal("Program received signal SIGNOTASIGNAL, nonsense."), 0);
    cr_assert_eq(inj_gdb_received_signal("HI_RETURN 300"), 0);
    cr_assert_eq(inj_gdb_received_signal("Program received signal SIG"), 0);
}
