package main

import (
	"fmt"
	"os"
	"testing"
)

// TestPipePath: a pipe named by a path (-r /dev/stdin, a shell's process
// substitution -r <(tcpdump -w -)) decodes as the file does, with -j 1 and
// -j 2. With -j 2 the pipe was opened a second time to be read in chunks,
// and the first Source lost what that read: "record longer than 262144
// octets" at frame 18 of crc_v2_iwtest_ops.pcap.
func TestPipePath(t *testing.T) {
	const f = siw + "crc_v2_iwtest_ops.pcap"
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{"1", "2"} {
		t.Run("-j "+j, func(t *testing.T) { pipePath(t, f, data, "-j", j) })
		// -t r reads the first packet's time ahead from the files: not
		// from a pipe, whose octets the decode would then lack.
		t.Run("-t r -j "+j, func(t *testing.T) { pipePath(t, f, data, "-t", "r", "-j", j) })
	}
}

// pipePath runs iwarpdump on a pipe's /dev/fd path fed with data, the
// contents of capture f, and compares with -r f.
func pipePath(t *testing.T, f string, data []byte, args ...string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { _, _ = w.Write(data); w.Close() }()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if fi, err := os.Stat(path); err != nil || fi.Mode().IsRegular() {
		t.Skipf("no /dev/fd path for a pipe here (%v)", err)
	}
	code, fromPipe, errs := runCmd(t, nil, append([]string{"-r", path}, args...)...)
	wantCode, fromFile, _ := runCmd(t, nil, append([]string{"-r", f}, args...)...)
	if code != wantCode || fromPipe != fromFile {
		t.Errorf("-r %s %v: exit %d (want %d), output differs from -r %s's; stderr:\n%s", path, args, code, wantCode, f, errs)
	}
}
