package mongo

import (
	"errors"
	"os"
	"syscall"
)

// processSpace names this process's PID namespace, such as
// "pid:[4026531836]": two processes on one host see each other's PIDs only
// when they share it.
func processSpace() string {
	s, _ := os.Readlink("/proc/self/ns/pid")
	return s
}

// processGone tells whether no process pid exists in this PID namespace. A
// zombie, or a process that took the PID over, counts as alive.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
