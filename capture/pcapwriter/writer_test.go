package pcapwriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// frame returns an Ethernet/IPv4/TCP frame of n octets (n >= 54) whose
// payload octets are seed.
func frame(n int, seed byte) []byte {
	f := make([]byte, n)
	copy(f, []byte{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00})
	ip := f[14:]
	ip[0] = 0x45
	tl := n - 14
	ip[2], ip[3] = byte(tl>>8), byte(tl)
	ip[8], ip[9] = 64, 6
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	tcp := ip[20:]
	tcp[0], tcp[1], tcp[2], tcp[3] = 0x9c, 0x40, 0x1c, 0x06
	tcp[12] = 0x50
	for i := 54; i < n; i++ {
		f[i] = seed
	}
	return f
}

type pkt struct {
	ts   time.Time
	data []byte
	wire int
}

func testPackets() []pkt {
	base := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	var ps []pkt
	for i := 0; i < 20; i++ {
		d := frame(54+i*37, byte(i))
		wire := len(d)
		if i%5 == 4 {
			wire += 100 // cut by a snaplen
		}
		ps = append(ps, pkt{base.Add(time.Duration(i) * 1001 * time.Microsecond), d, wire})
	}
	return ps
}

func readBack(t *testing.T, path string) []pkt {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer src.Close()
	var out []pkt
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		if p.Kind != capture.KindTCP {
			t.Fatalf("%s frame %d: kind %v (%v)", path, p.Frame, p.Kind, p.Err)
		}
		out = append(out, pkt{p.TS, append([]byte(nil), p.Data...), p.WireLen})
	}
	if lt := src.LinkType(0); lt != layers.LinkTypeEthernet {
		t.Errorf("%s: link type %v", path, lt)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		prec time.Duration
	}{
		{"pcapng", Options{Format: Pcapng, Interface: "lo", Application: "iwarpdump test"}, time.Nanosecond},
		{"pcap-us", Options{Format: Pcap}, time.Microsecond},
		{"pcap-ns", Options{Format: Pcap, Nanoseconds: true}, time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x."+tc.name)
			tc.opts.LinkType = layers.LinkTypeEthernet
			w, err := Create(path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			in := testPackets()
			for _, p := range in {
				if err := w.WritePacket(p.ts, p.data, p.wire); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			out := readBack(t, path)
			if len(out) != len(in) {
				t.Fatalf("%d packets back, want %d", len(out), len(in))
			}
			for i := range in {
				if !out[i].ts.Equal(in[i].ts.Truncate(tc.prec)) || !bytes.Equal(out[i].data, in[i].data) || out[i].wire != in[i].wire {
					t.Errorf("packet %d: got %v/%d/%d, want %v/%d/%d", i, out[i].ts, len(out[i].data), out[i].wire, in[i].ts, len(in[i].data), in[i].wire)
				}
			}
			tcpdumpReads(t, path, len(in))
		})
	}
}

// tcpdumpReads checks that tcpdump reads the file, when it is installed.
func tcpdumpReads(t *testing.T, path string, n int) {
	t.Helper()
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		return
	}
	out, err := exec.Command(bin, "-n", "-r", path).CombinedOutput()
	if err != nil {
		t.Fatalf("tcpdump -r %s: %v\n%s", path, err, out)
	}
	if got := strings.Count(string(out), "\n") - 1; got != n { // minus "reading from file"
		t.Errorf("tcpdump read %d packets, want %d:\n%s", got, n, out)
	}
}

func TestSnaplenCut(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Options{LinkType: layers.LinkTypeEthernet, Snaplen: 60})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 0)
	if err := w.WritePacket(ts, frame(200, 1), 200); err != nil {
		t.Fatal(err)
	}
	w.Close()
	src, err := capture.NewSource(&buf, "buf")
	if err != nil {
		t.Fatal(err)
	}
	p, err := src.Next()
	if err != nil || p.CapLen != 60 || p.WireLen != 200 {
		t.Fatalf("got caplen %d wirelen %d err %v", p.CapLen, p.WireLen, err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	sort.Strings(s)
	return s
}

// TestRotateSize: tcpdump -C names the files FILE, FILE1, FILE2... and
// rotates before the packet that finds the file over the size.
func TestRotateSize(t *testing.T) {
	dir := t.TempDir()
	var closed []string
	w, err := Create(filepath.Join(dir, "cap"), Options{Format: Pcap, LinkType: layers.LinkTypeEthernet, FileSize: 1000, OnClose: func(n string) { closed = append(closed, filepath.Base(n)) }})
	if err != nil {
		t.Fatal(err)
	}
	// 24-octet header + 10 records of 16+400 octets: files hold 3 packets
	// (24+416*2 = 856 <= 1000, then 1272 > 1000).
	for i := 0; i < 10; i++ {
		if err := w.WritePacket(time.Unix(int64(i), 0), frame(400, byte(i)), 400); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	got := names(t, dir)
	want := []string{"cap", "cap1", "cap2", "cap3"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("files %v, want %v", got, want)
	}
	if strings.Join(closed, ",") != "cap,cap1,cap2,cap3" {
		t.Errorf("OnClose calls %v", closed)
	}
	total := 0
	for _, n := range got {
		total += len(readBack(t, filepath.Join(dir, n)))
	}
	if total != 10 {
		t.Errorf("%d packets in the files, want 10", total)
	}
}

// TestRotateRing: -C with -W 3 reuses cap0, cap1, cap2.
func TestRotateRing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "cap"), Options{Format: Pcapng, LinkType: layers.LinkTypeEthernet, FileSize: 500, MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		if err := w.WritePacket(time.Unix(int64(i), 0), frame(400, byte(i)), 400); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if got := strings.Join(names(t, dir), ","); got != "cap0,cap1,cap2" {
		t.Fatalf("files %s", got)
	}
	// 12 packets, 2 per file (header ~100 + 432 > 500 after the second):
	// files 0,1,2,0,1,2: the last file written is cap2 with packets 10, 11.
	last := readBack(t, filepath.Join(dir, "cap2"))
	if len(last) != 2 || last[0].data[60] != 10 {
		t.Errorf("cap2 holds %d packets, first payload %d", len(last), last[0].data[60])
	}
	// Width of the number follows MaxFiles-1.
	w, _ = Create(filepath.Join(dir, "wide"), Options{LinkType: layers.LinkTypeEthernet, FileSize: 1, MaxFiles: 11})
	w.WritePacket(time.Unix(0, 0), frame(60, 0), 60)
	w.Close()
	if _, err := os.Stat(filepath.Join(dir, "wide01")); err != nil {
		t.Errorf("-W 11 numbering: %v", err)
	}
}

// TestRotateTime: -G with a strftime name and a fake clock; -W ends the
// capture after that many files.
func TestRotateTime(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	w, err := Create(filepath.Join(dir, "cap-%Y%m%d-%H%M%S.pcapng"), Options{LinkType: layers.LinkTypeEthernet, Rotate: 10 * time.Second, MaxFiles: 3, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	write := func() error { return w.WritePacket(now, frame(60, 0), 60) }
	for i := 0; i < 3; i++ {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		now = now.Add(4 * time.Second)
	}
	// 12 s after the start: a new file.
	if err := write(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Second)
	if err := write(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Second)
	if err := write(); err != ErrFileLimit {
		t.Fatalf("third rotation with -W 3: %v, want ErrFileLimit", err)
	}
	w.Close()
	got := strings.Join(names(t, dir), ",")
	want := "cap-20240102-030405.pcapng,cap-20240102-030417.pcapng,cap-20240102-030427.pcapng"
	if got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	if n := len(readBack(t, filepath.Join(dir, "cap-20240102-030405.pcapng"))); n != 3 {
		t.Errorf("first file: %d packets", n)
	}
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2024, 3, 7, 15, 4, 5, 0, time.UTC)
	for f, want := range map[string]string{
		"%Y-%m-%d %H:%M:%S": "2024-03-07 15:04:05",
		"%F_%T":             "2024-03-07_15:04:05",
		"%y%j %a %b %e %p":  "24067 Thu Mar  7 PM",
		"%s %% %q":          "1709823845 % %q",
		"plain":             "plain",
		"%":                 "%",
	} {
		if got := Strftime(f, tm); got != want {
			t.Errorf("Strftime(%q) = %q, want %q", f, got, want)
		}
	}
}

// TestStrftimeAsDate: every conversion as GNU date (glibc's strftime, the
// one tcpdump -G uses) prints it, in UTC, on dates that try the week
// numbers (a year starting on a Friday, the ISO year before or after),
// midnight and noon.
func TestStrftimeAsDate(t *testing.T) {
	date, err := exec.LookPath("date")
	if err != nil {
		t.Skip("no date command")
	}
	const format = "%a|%A|%b|%B|%c|%C|%d|%D|%e|%F|%g|%G|%h|%H|%I|%j|%k|%l|%m|%M|%p|%P|%r|%R|%s|%S|%T|%u|%U|%V|%w|%W|%x|%X|%y|%Y|%z|%Z|%%"
	for _, tm := range []time.Time{
		time.Date(2024, 3, 7, 15, 4, 5, 0, time.UTC),
		time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 30, 12, 30, 0, 0, time.UTC),
		time.Date(2023, 1, 1, 9, 5, 7, 0, time.UTC),
		time.Date(2020, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC),
	} {
		cmd := exec.Command(date, "-u", "-d", "@"+strconv.FormatInt(tm.Unix(), 10), "+"+format)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("date: %v", err)
		}
		want := strings.TrimSuffix(string(out), "\n")
		if got := Strftime(format, tm); got != want {
			g, w := strings.Split(got, "|"), strings.Split(want, "|")
			for i, c := range strings.Split(format, "|") {
				if i < len(g) && i < len(w) && g[i] != w[i] {
					t.Errorf("%v: %s = %q, date prints %q", tm, c, g[i], w[i])
				}
			}
		}
	}
}

func TestWritePacketNoAllocs(t *testing.T) {
	for _, f := range []Format{Pcapng, Pcap} {
		w, _ := NewWriter(discard{}, Options{Format: f, LinkType: layers.LinkTypeEthernet})
		d := frame(1500, 1)
		ts := time.Unix(1, 2)
		if n := testing.AllocsPerRun(100, func() { _ = w.WritePacket(ts, d, len(d)) }); n != 0 {
			t.Errorf("%v: WritePacket allocates %v times", f, n)
		}
	}
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func BenchmarkWritePacket(b *testing.B) {
	for _, f := range []Format{Pcapng, Pcap} {
		b.Run(f.String(), func(b *testing.B) {
			w, _ := NewWriter(discard{}, Options{Format: f, LinkType: layers.LinkTypeEthernet})
			d := frame(1500, 1)
			ts := time.Unix(1, 2)
			b.ReportAllocs()
			b.SetBytes(int64(len(d)))
			for b.Loop() {
				_ = w.WritePacket(ts, d, len(d))
			}
		})
	}
}

// TestLinkTypes: packets of several link types (merged captures) go on an
// interface of their own link type, each described once before its first
// packet, as pcapgo and tshark read them; a pcap file refuses those of
// another link type than its header's and keeps the rest.
func TestLinkTypes(t *testing.T) {
	in := testPackets()[:6]
	links := []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeRaw, layers.LinkTypeEthernet,
		layers.LinkTypeRaw, layers.LinkTypeLinuxSLL, layers.LinkTypeRaw}
	data := func(i int) []byte {
		switch links[i] {
		case layers.LinkTypeRaw:
			return in[i].data[14:] // the IP packet
		case layers.LinkTypeLinuxSLL:
			sll := make([]byte, 16)
			binary.BigEndian.PutUint16(sll[14:], 0x0800)
			return append(sll, in[i].data[14:]...)
		}
		return in[i].data
	}
	for _, format := range []Format{Pcapng, Pcap} {
		path := filepath.Join(t.TempDir(), "links."+format.String())
		w, err := Create(path, Options{Format: format, LinkType: layers.LinkTypeEthernet, Interface: "any"})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range in {
			err := w.WritePacketLink(p.ts, data(i), len(data(i)), links[i])
			if want := format == Pcap && links[i] != layers.LinkTypeEthernet; (err != nil) != want || err != nil && !errors.Is(err, ErrLinkType) {
				t.Fatalf("%v: packet %d of link type %v: %v", format, i, links[i], err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		src, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []layers.LinkType
		for {
			p, err := src.Next()
			if err != nil {
				break
			}
			if p.Kind != capture.KindTCP {
				t.Errorf("%v: frame %d: kind %v (%v)", format, p.Frame, p.Kind, p.Err)
			}
			got = append(got, src.LinkType(p.Interface))
		}
		src.Close()
		want := links
		if format == Pcap {
			want = []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeEthernet}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: link types read back %v, want %v", format, got, want)
		}
		if format == Pcapng {
			// tshark: interfaces 0, 1, 2 in the order of first use.
			out, err := exec.Command(testutil.RequireTshark(t), "-r", path, "-T", "fields", "-e", "frame.interface_id").Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(out)); !slices.Equal(got, []string{"0", "1", "0", "1", "2", "1"}) {
				t.Errorf("tshark's interface ids %v", got)
			}
		}
	}
}
