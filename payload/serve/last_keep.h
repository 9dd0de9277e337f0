/* last_keep.h - PID.last.tmp opened at a session's start, for a process
 * that may change user before it ends (issue 28).
 *
 * A root process's session makes its socket and files in root's
 * directory (0700). A worker forked from it that then becomes another
 * user (nginx's, apache's, php-fpm's: setuid right after the fork) could
 * neither create its PID.last.tmp there at exit nor rename it: its last
 * snapshot was lost. So a session that starts as root creates the file
 * at once and keeps it open (close-on-exec); the end writes through that
 * descriptor, which the change of user does not take away. Where the
 * rename is then refused, PID.last.tmp stays, whole (its header's length
 * is written last), and the cli takes it as it takes PID.last.
 */
#ifndef HI_PAYLOAD_LAST_KEEP_H
#define HI_PAYLOAD_LAST_KEEP_H

/* Start lock, a followed fork child's session (the process attached by
 * a cli runs as the user it will keep): a descriptor kept from an earlier
 * session (this process's: removed; a parent's, inherited by fork: closed
 * only) goes; then, as root, tmp_path is created (O_EXCL after removing
 * any) and kept. */
void pl_last_keep_open(const char *tmp_path);

/* fork child (atfork): a kept descriptor is the parent's: closed. */
void pl_last_keep_atfork_child(void);

/* The kept descriptor if it is still the file opened (the program may
 * have closed its number, and another file taken it) and this process's;
 * -1 otherwise. The caller owns it then (closes it). */
int pl_last_keep_take(void);

/* Whether the file at tmp_path was created by pl_last_keep_open for this
 * process (and not yet taken): it must not be removed before writing. */
int pl_last_keep_held(void);

/* The session ends without a last snapshot: the descriptor closed and the
 * file removed (left when the user changed: the cli's detach removes it,
 * and its cleaning an incomplete PID.last.tmp of a process gone). */
void pl_last_keep_drop(const char *tmp_path);

#endif /* HI_PAYLOAD_LAST_KEEP_H */
