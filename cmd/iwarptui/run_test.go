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
	scr := tcell.NewSimulationScreen("UTF-8")
	old := openTUI
	defer func() { openTUI = old }()
	openTUI = func(path string, o tui.Options) (*tui.App, error) {
		o.Screen = scr
		return tui.New(path, o)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		scr.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	}()
	done := make(chan int)
	go func() {
		var out, errb bytes.Buffer
		done <- run(context.Background(), []string{"../../testdata/siw/crc_v2_rping.pcap"}, &out, &errb)
	}()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit")
	}
}
