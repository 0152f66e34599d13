package flows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// bundledCapture is one pcap capture of testdata, read into packets.
type bundledCapture struct {
	path string
	pkts []capture.Packet
	data []byte // the file
}

// bundled returns every bundled pcap capture (some have no packets).
func bundled(t testing.TB) []bundledCapture {
	t.Helper()
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var out []bundledCapture
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bundledCapture{f, testutil.ReadPackets(data), data})
	}
	return out
}
