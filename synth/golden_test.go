package synth

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../testdata/synth from the generator")

// goldenDir holds the committed sample captures.
const goldenDir = "../testdata/synth"

// goldenSeed is the seed of every committed sample.
const goldenSeed = 1

// goldenSet is the committed sample: every kind of layout and damage, less
// than 200 KB in all.
var goldenSet = []string{
	"rev1-crc", "rev1-nocrc", "rev2-enhanced", "rev2-p2p-read-rtr", "rdmac",
	"marker-grid-end", "marker-pad-crc", "marker-split-len", "tiny-segments", "mss-span",
	"retransmit-conflict", "gap", "midstream-markers", "snaplen",
	"terminate-rdmap", "terminate-ddp", "terminate-llp", "terminate-siw",
	"reject", "no-reply", "rfc7306",
}

// TestGolden checks that the committed samples are exactly what the
// generator makes today (run with -update to rewrite them).
func TestGolden(t *testing.T) {
	var total int
	var readme strings.Builder
	readme.WriteString("# Generated iWARP captures\n\n" +
		"Made by package synth (seed 1); each NAME.pcap has its ground truth in NAME.truth.jsonl.\n" +
		"Regenerate with `go generate ./synth` (or `go test ./synth -run TestGolden -update`);\n" +
		"`go run ./cmd/iwarpsynth -scenario NAME -seed 1 -o NAME.pcap` makes the same files.\n\n" +
		"| file | what it holds |\n|---|---|\n")
	for _, n := range goldenSet {
		p, tr := gen(t, mustNamed(t, n, goldenSeed))
		total += len(p) + len(tr)
		fmt.Fprintf(&readme, "| %s.pcap | %s |\n", n, Describe(n))
		files := map[string][]byte{n + ".pcap": p, n + ".truth.jsonl": tr}
		for name, want := range files {
			path := filepath.Join(goldenDir, name)
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go generate ./synth)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the generator's output (run go generate ./synth if the change is intended)", path)
			}
		}
	}
	if total >= 200<<10 {
		t.Errorf("golden set is %d octets, keep it under 200 KB", total)
	}
	path := filepath.Join(goldenDir, "README.md")
	if *update {
		if err := os.WriteFile(path, []byte(readme.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if got, err := os.ReadFile(path); err != nil || string(got) != readme.String() {
		t.Errorf("%s is stale (run go generate ./synth)", path)
	}
}
