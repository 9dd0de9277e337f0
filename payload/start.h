/* start.h - session life cycle shared by start.c and the agent. */
#ifndef HI_PAYLOAD_START_H
#define HI_PAYLOAD_START_H

enum pl_state {
    PL_IDLE = 0,     /* no session, no agent thread */
    PL_RUNNING = 1,  /* hooks live, agent serving */
    PL_STOPPING = 2, /* slots restored, agent closing down */
};

/* Current state (atomic). */
int pl_state_get(void);

/* Turns the hooks off and restores every slot. Returns 0, or -ESRCH if no
 * session is running. Safe from the agent thread and from any other. */
int pl_session_stop(void);

/* The agent has closed everything: a new start may begin. */
void pl_session_agent_exited(void);

#endif /* HI_PAYLOAD_START_H */
