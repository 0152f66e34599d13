package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/iwarpkit/iwarpkit/internal/tui"
)

func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "give exactly one capture file"},
		{[]string{"a", "b"}, 2, "give exactly one capture file"},
		{[]string{"--mpa-flags", "x", "f"}, 2, "unknown --mpa-flags"},
		{[]string{"-t", "x", "f"}, 2, "unknown time format"},
		{[]string{"--decode-as", "nonsense", "f"}, 2, "decode-as"},
		{[]string{"/nonexistent.pcap"}, 2, "no such file"},
		{[]string{"-h"}, 0, "usage: iwarptui"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("run %q: code %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}

// TestRunQuits runs the command in-process on a simulation screen and
// quits with q.
func TestRunQuits(t *testing.T) {
	if _, errOut := runQuit(t, "../../testdata/siw/crc_v2_rping.pcap"); errOut != "" {
		t.Errorf("stderr %q", errOut)
	}
}

// TestRunSnapHidden: on leaving, the command says on standard error what
// iwarpdump says of a capture whose snap length hid its connections
// (crc_v2_rping.pcap cut by editcap -s 60: its one connection).
func TestRunSnapHidden(t *testing.T) {
	_, errOut := runQuit(t, "../../testdata/snaplen/crc_v2_rping_s60.pcap")
	if !strings.HasPrefix(errOut, "iwarptui: 1 TCP connection could not be told iWARP or not: the capture's snap length cut") {
		t.Errorf("stderr %q", errOut)
	}
}

// runQuit runs the command on path in-process on a simulation screen,
// quits with q once the capture is indexed, and returns its exit status
// (0, or the test fails) and standard error.
func runQuit(t *testing.T, path string) (int, string) {
	t.Helper()
	scr := tcell.NewSimulationScreen("UTF-8")
	old := openTUI
	defer func() { openTUI = old }()
	apps := make(chan *tui.App, 1)
	openTUI = func(path string, o tui.Options) (*tui.App, error) {
		o.Screen = scr
		a, err := tui.New(path, o)
		if err == nil {
			apps <- a
		}
		return a, err
	}
	go func() {
		a := <-apps
		for !a.X.Progress().Done {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		scr.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	}()
	type result struct {
		code int
		err  string
	}
	done := make(chan result)
	go func() {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{path}, &out, &errb)
		done <- result{code, errb.String()}
	}()
	select {
	case r := <-done:
		if r.code != 0 {
			t.Fatalf("exit code %d, stderr %q", r.code, r.err)
		}
		return r.code, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit")
	}
	return 0, ""
}
