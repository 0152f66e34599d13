package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is the standard output of a run that a test reads while it
// runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLineBufferedStdin: iwarpdump -l -r - writes the records of the
// packets that have come before the rest of the capture comes, as tcpdump
// -l -r - does: tcpdump -U -w - | iwarpdump -l -r - shows the traffic as
// it is captured. The first half of the capture is written, the line of
// its MPA Request (frame 4) must come out, then the rest is written; the
// whole output is -r FILE's. The same with -j 2, whose workers handed
// their records over in rounds of 256 KiB of packets: on a pipe, -l
// decodes with one worker (workerCount).
func TestLineBufferedStdin(t *testing.T) {
	for _, extra := range [][]string{nil, {"-j", "2"}} {
		t.Run(strings.Join(append([]string{"l"}, extra...), " "), func(t *testing.T) {
			testLineBufferedStdin(t, extra)
		})
	}
}

func testLineBufferedStdin(t *testing.T, extra []string) {
	const f = siw + "crc_v2_rping.pcap"
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // ends the run if the test fails before
	saved := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = saved }()

	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), append([]string{"-l", "-r", "-"}, extra...), &out, &errb) }()
	if _, err := w.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	const deadline = 5 * time.Second
	for start := time.Now(); !strings.Contains(out.String(), "MPA Request"); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > deadline {
			t.Fatalf("-l -r -: no MPA Request line %v after the first half of the capture was written; output so far:\n%s", deadline, out.String())
		}
	}
	if _, err := w.Write(data[len(data)/2:]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	select {
	case code := <-done:
		_, want, _ := runCmd(t, nil, "-r", f)
		if code != 0 || out.String() != want {
			t.Errorf("-l -r -: exit %d, output differs from -r FILE's; stderr:\n%s", code, errb.String())
		}
	case <-time.After(deadline):
		t.Fatalf("-l -r -: not done %v after the end of the capture", deadline)
	}
}
