//go:build linux

// Command rsswrap runs a command and reports its peak resident memory, for
// TestDamagedCapturesRealBinary.
//
//	rsswrap PROGRAM [ARG...]
//
// It passes the program's standard output and error through, writes
// "MAXRSS_KIB FLOOR_KIB STATUS" to file descriptor 3 and exits with the
// program's exit code (128+N when signal N killed it). STATUS is "exit",
// "signal:NAME" or "start:ERROR".
//
// Why a wrapper: os/exec starts processes with vfork (CLONE_VM), and
// exec(2) folds the address space it leaves, the parent's, into the child's
// ru_maxrss. Measured straight from the test, every run would show at least
// the test process's own peak. Started from this small program, the
// program's ru_maxrss includes at most this wrapper's footprint, which it
// reports as FLOOR (its VmHWM when it starts the program).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run())
}

func run() int {
	syscall.CloseOnExec(3) // the report pipe is not for the program
	report := os.NewFile(3, "report")
	if len(os.Args) < 2 || report == nil {
		fmt.Fprintln(os.Stderr, "usage: rsswrap PROGRAM [ARG...] (with fd 3 open)")
		return 125
	}
	var floor int64
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				_, _ = fmt.Sscan(v, &floor)
			}
		}
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	st := cmd.ProcessState
	if st == nil {
		fmt.Fprintf(report, "0 %d start:%s\n", floor, strings.ReplaceAll(err.Error(), " ", "_"))
		return 125
	}
	var rss int64
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	status, code := "exit", st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		status = "signal:" + strings.ReplaceAll(ws.Signal().String(), " ", "_")
		code = 128 + int(ws.Signal())
	}
	fmt.Fprintf(report, "%d %d %s\n", rss, floor, status)
	return code
}
