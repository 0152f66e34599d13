package bpf

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	xbpf "golang.org/x/net/bpf"
)

// TestFormatAsTcpdump: tcpdump's own programs, taken from `tcpdump -ddd`,
// print as `tcpdump -d` and `tcpdump -dd` print them, for programs that
// use every kind of instruction libpcap generates (loads of every size and
// mode, the X register, scratch memory, arithmetic, jumps, Linux's VLAN
// ancillary loads) on Ethernet and Linux cooked captures.
func TestFormatAsTcpdump(t *testing.T) {
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Skip("tcpdump not installed")
	}
	n := 0
	for _, c := range []struct{ lt, expr string }{
		{"EN10MB", "tcp port 7174"},
		{"EN10MB", "host 10.0.0.1 and not port 22"},
		{"EN10MB", "ip6 and tcp dst port 80"},
		{"EN10MB", "vlan 100 and udp"},
		{"EN10MB", "tcp[13] & 2 != 0"},
		{"EN10MB", "ip[2:2] - ((ip[0] & 0xf) << 2) > 100"},
		{"EN10MB", "len > 100 and ether[0] & 1 = 0"},
		{"EN10MB", "ip6 protochain 6"},
		{"EN10MB", "tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420"},
		{"EN10MB", "ip[0] * 3 / 2 % 7 ^ 1 | 8 = 9 or -ip[1] = 0"},
		{"LINUX_SLL", "portrange 100-200"},
		{"EN10MB", ""},
		{"lo", "vlan 100 and tcp"},
	} {
		out := func(flag string) string {
			args := []string{flag, "-y", c.lt, c.expr}
			if c.lt == "lo" {
				// Live on Linux: the VLAN tag is in ancillary data.
				args = []string{flag, "-i", "lo", c.expr}
			}
			o, err := exec.Command(tcpdump, args...).Output()
			if err != nil && c.lt == "lo" {
				t.Skipf("tcpdump -i lo (root needed): %v", err)
			}
			if err != nil {
				t.Fatalf("tcpdump %v: %v", args, err)
			}
			return string(o)
		}
		var raw []xbpf.RawInstruction
		for _, l := range strings.Split(strings.TrimSpace(out("-ddd")), "\n")[1:] {
			f := strings.Fields(l)
			var v [4]uint64
			for i := range v {
				v[i], _ = strconv.ParseUint(f[i], 10, 32)
			}
			raw = append(raw, xbpf.RawInstruction{Op: uint16(v[0]), Jt: uint8(v[1]), Jf: uint8(v[2]), K: uint32(v[3])})
		}
		if got, want := FormatImage(raw), out("-d"); got != want {
			t.Errorf("%s %q: -d\n got:\n%s\nwant:\n%s", c.lt, c.expr, got, want)
		}
		if got, want := FormatC(raw), out("-dd"); got != want {
			t.Errorf("%s %q: -dd\n got:\n%s\nwant:\n%s", c.lt, c.expr, got, want)
		}
		if got, want := FormatRaw(raw), out("-ddd"); got != want {
			t.Errorf("%s %q: -ddd\n got:\n%s\nwant:\n%s", c.lt, c.expr, got, want)
		}
		n += len(raw)
	}
	t.Logf("%d instructions as tcpdump prints them", n)
}
