//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileCutWhileRead: a capture file truncated while iwarpdump reads it
// (mapped with --mmap, capture.OpenMapped), pcap or pcapng, is reported as damage, as a
// file cut short beforehand is: a message naming the file and the packets
// decoded, exit 3 under --strict, and no crash.
func TestFileCutWhileRead(t *testing.T) {
	for _, name := range []string{siw + "gso_v2_nocrc_ib_write_bw_200000.pcap", "../../testdata/midstream/iwtest_ops_from_frame15.pcap"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "cut.pcap")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		testPacketHook = func(n uint64) {
			if n == 10 {
				if err := os.Truncate(p, 4096); err != nil {
					t.Error(err)
				}
			}
		}
		code, _, errs := runCmd(t, nil, "-r", p, "--strict", "--mmap")
		testPacketHook = nil
		if code != 3 || !strings.Contains(errs, p+": the file was cut short while it was read, or could not be read (memory fault at 0x") ||
			!strings.Contains(errs, " packets before the damage") {
			t.Errorf("%s: exit %d, stderr:\n%s", name, code, errs)
		}
	}
}
