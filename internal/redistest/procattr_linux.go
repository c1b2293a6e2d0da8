package redistest

import "syscall"

// sysProcAttr has the kernel kill the server when the test binary dies, so
// that a test killed by a timeout leaves no redis-server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
