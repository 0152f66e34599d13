package dissect_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestHexBits: every hexadecimal field has its width, and no other field
// has one.
func TestHexBits(t *testing.T) {
	for _, f := range dissect.Fields() {
		switch {
		case f.Type == dissect.TypeHex && f.Bits != 8 && f.Bits != 16 && f.Bits != 24 && f.Bits != 32 && f.Bits != 64:
			t.Errorf("%s: hex field of %d bits", f.Name, f.Bits)
		case f.Type != dissect.TypeHex && f.Bits != 0:
			t.Errorf("%s: a %v field with Bits %d", f.Name, f.Type, f.Bits)
		}
	}
}

// TestHexBitsAsTshark: the width of every hex field that has a Wireshark
// alias is the width of Wireshark's field (tshark -G fields: FT_UINT32 is
// 32 bits), so that -T fields prints as many digits as tshark.
func TestHexBitsAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	out, err := exec.Command(tshark, "-G", "fields").Output()
	if err != nil {
		t.Fatalf("tshark -G fields: %v", err)
	}
	types := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		c := strings.Split(line, "\t")
		if len(c) > 3 && c[0] == "F" {
			types[c[2]] = c[3]
		}
	}
	checked := 0
	for _, f := range dissect.Fields() {
		if f.Type != dissect.TypeHex {
			continue
		}
		for _, a := range f.Aliases {
			ft, ok := types[a]
			if !ok {
				t.Errorf("%s: alias %s is not a tshark field", f.Name, a)
				continue
			}
			want := map[string]uint8{"FT_UINT8": 8, "FT_UINT16": 16, "FT_UINT24": 24, "FT_UINT32": 32, "FT_UINT64": 64}[ft]
			if f.Bits != want {
				t.Errorf("%s: %d bits, tshark's %s is %s", f.Name, f.Bits, a, ft)
			}
			checked++
		}
	}
	if checked < 8 {
		t.Errorf("only %d hex fields checked against tshark", checked)
	}
}
