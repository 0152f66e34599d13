package damage_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// buildWrapper builds testdata/rsswrap, which measures iwarpdump's peak
// memory (see its doc comment for why the test cannot measure it itself).
func buildWrapper(t *testing.T, root, dir string) string {
	t.Helper()
	w := filepath.Join(dir, "rsswrap")
	build := exec.Command("go", "build", "-o", w, "./internal/damage/testdata/rsswrap")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build rsswrap: %v\n%s", err, out)
	}
	return w
}

// measured is what a wrapped run reports.
type measured struct {
	rssKiB, floorKiB int64
	status           string // "exit", "signal:NAME" or "start:ERROR"; "" if unknown
}

// command returns a command running bin with args under the wrapper, in a
// process group of its own that the context's cancellation kills whole,
// and a function to call after Wait for the measurements.
func command(ctx context.Context, wrapper, bin string, args []string) (*exec.Cmd, func() measured, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, wrapper, append([]string{bin}, args...)...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	done := make(chan measured, 1)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		var m measured
		_, _ = fmt.Sscan(string(b), &m.rssKiB, &m.floorKiB, &m.status)
		done <- m
	}()
	return cmd, func() measured {
		w.Close() // ours; the wrapper's copy closed when it exited
		return <-done
	}, nil
}
