package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/synth"
)

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestList(t *testing.T) {
	code, out, _ := runCLI("-list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, n := range append(synth.Names(), append([]string{"large", "perf", "small"}, synth.StressKinds...)...) {
		if !strings.Contains(out, n+" ") {
			t.Errorf("-list lacks %q", n)
		}
	}
}

func TestScenario(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.pcap")
	code, out, errs := runCLI("-scenario", "rev1-crc", "-seed", "3", "-o", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "frames") {
		t.Errorf("output %q", out)
	}
	s, _ := synth.Named("rev1-crc", 3)
	var p, tr bytes.Buffer
	if _, err := synth.Generate(s, &p, &tr); err != nil {
		t.Fatal(err)
	}
	gotP, _ := os.ReadFile(path)
	gotT, _ := os.ReadFile(filepath.Join(dir, "out.truth.jsonl"))
	if !bytes.Equal(gotP, p.Bytes()) || !bytes.Equal(gotT, tr.Bytes()) {
		t.Error("CLI output differs from synth.Generate")
	}
}

func TestLargeSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.pcap")
	if code, _, errs := runCLI("-size", "256K", "-seed", "2", "-o", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < 256<<10 {
		t.Fatalf("large pcap: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(filepath.Dir(path), "big.truth.jsonl")); err != nil || fi.Size() == 0 {
		t.Fatalf("large truth: %v", err)
	}
}

// TestStress: -scenario with a stress workload writes what
// synth.WriteStress writes, -conns of them.
func TestStress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "syn.pcap")
	if code, _, errs := runCLI("-scenario", "synflood", "-conns", "50", "-seed", "4", "-o", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var want bytes.Buffer
	if err := synth.WriteStress(&want, synth.StressSYNFlood, 50, 4); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want.Bytes()) {
		t.Error("CLI output differs from synth.WriteStress")
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	path := filepath.Join(t.TempDir(), "x.pcap")
	if code := run(ctx, []string{"-size", "1M", "-o", path}, &out, &errb); code != 1 {
		t.Fatalf("cancelled run: exit %d", code)
	}
}

func TestAll(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := runCLI("-all", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, n := range synth.Names() {
		if _, err := os.Stat(filepath.Join(dir, n+".truth.jsonl")); err != nil {
			t.Error(err)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-scenario", "rev1-crc"},
		{"-scenario", "nope", "-o", "x.pcap"},
		{"-size", "lots", "-o", "x.pcap"},
		{"-scenario", "rev1-crc", "-size", "1M", "-o", "x.pcap"},
		{"-bogus"},
		{"-list", "extra"},
		{"-scenario", "synflood", "-conns", "-1", "-o", "x.pcap"},
		{"-scenario", "synflood", "-size", "1M", "-o", "x.pcap"},
		{"-scenario", "rev1-crc", "-conns", "10", "-o", "x.pcap"},
	} {
		if code, _, _ := runCLI(args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"500M": 500 << 20, "2G": 2 << 30, "64k": 64 << 10, "1048576": 1 << 20, "10MiB": 10 << 20, "3MB": 3 << 20} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "-1M", "0", "1T", "99999999999G"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}
