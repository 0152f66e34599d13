package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// frameRow is what the tests of this file compare of a frame, in the
// columns of tshark -T fields -e frame.number -e frame.time_epoch -e
// frame.len -e frame.cap_len -e tcp.srcport (the port only for a decoded
// TCP segment).
func frameRow(p *capture.Packet) string {
	port := ""
	if p.Kind == capture.KindTCP {
		port = fmt.Sprint(p.Src.Port())
	}
	return strings.TrimSpace(fmt.Sprintf("%d %d.%09d %d %d %s", p.Frame, p.TS.Unix(), p.TS.Nanosecond(), p.WireLen, p.CapLen, port))
}

// sourceRows reads path with open and returns a frameRow per frame and
// the error the file ended with (nil at its clean end).
func sourceRows(t *testing.T, open func(string) (*capture.Source, error), path string) ([]string, error) {
	t.Helper()
	s, err := open(path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var rows []string
	for {
		var p capture.Packet
		if err := s.NextInto(&p); err != nil {
			if err == io.EOF {
				return rows, nil
			}
			return rows, err
		}
		rows = append(rows, frameRow(&p))
	}
}

// tsharkRows returns tshark's frameRow of every frame of path, with the
// epoch time as tshark prints it.
func tsharkRows(t *testing.T, path string) []string {
	t.Helper()
	tshark := testutil.RequireTshark(t)
	out, _ := exec.Command(tshark, "-r", path, "-T", "fields", "-E", "separator=/s",
		"-e", "frame.number", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len", "-e", "tcp.srcport").Output()
	var rows []string
	for line := range strings.Lines(string(out)) {
		rows = append(rows, strings.TrimRight(line, " \n"))
	}
	return rows
}

// writeTemp writes b to a file named name in a test's temporary directory.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPcapOldVersions reads pcap files of versions 2.2 and 2.3, which
// libpcap and Wireshark read: before 2.3 a record header held the
// original length before the captured one; in 2.3 files both orders
// occur and the captured length is the smaller. They were refused
// ("Unknown minor version 2"). The expected lengths are tshark 4.0's
// (and tcpdump 4.99's) reading of the same files; the versions neither
// reads are refused with a message naming the version.
func TestPcapOldVersions(t *testing.T) {
	frames := threeFrames(t)
	full, cut := frames[0], frames[2][:60] // frames[2] cut by a snap length of 60
	long, short := uint32(len(frames[2])), uint32(60)
	n := uint32(len(full))
	// The cut frame still holds its TCP header: both frames decode as TCP.
	cutRow := fmt.Sprintf("%d %d %d", long, short, 40000)
	fullRow := fmt.Sprintf("%d %d %d", n, n, 40000)
	type rec struct{ at8, at12 uint32 } // the two length fields as written
	for _, tc := range []struct {
		name  string
		order binary.ByteOrder
		minor uint16
		recs  []rec
		want  []string // frame.len frame.cap_len tcp.srcport
	}{
		{"2.2-le", binary.LittleEndian, 2, []rec{{long, short}, {n, n}}, []string{cutRow, fullRow}},
		{"2.2-be", binary.BigEndian, 2, []rec{{long, short}, {n, n}}, []string{cutRow, fullRow}},
		// 2.3: swapped when the first field is the larger.
		{"2.3-both-orders", binary.LittleEndian, 3, []rec{{long, short}, {short, long}, {n, n}}, []string{cutRow, cutRow, fullRow}},
		{"2.4-not-swapped", binary.LittleEndian, 4, []rec{{short, long}, {n, n}}, []string{cutRow, fullRow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPcapFile(tc.order, false, 65535, layers.LinkTypeEthernet)
			for i, r := range tc.recs {
				data := cut
				if r.at8 == r.at12 {
					data = full
				}
				f.record(t0.Add(time.Duration(i)*time.Second), r.at8, r.at12, data)
			}
			b := f.bytes()
			tc.order.PutUint16(b[6:8], tc.minor)
			path := writeTemp(t, tc.name+".pcap", b)
			for _, open := range []struct {
				name string
				fn   func(string) (*capture.Source, error)
			}{{"Open", capture.Open}, {"OpenMapped", capture.OpenMapped}} {
				rows, err := sourceRows(t, open.fn, path)
				if err != nil || len(rows) != len(tc.want) {
					t.Fatalf("%s: %d frames, %v; want %d", open.name, len(rows), err, len(tc.want))
				}
				for i, row := range rows {
					// Frame number and time are checked in the
					// tshark comparison below.
					if got := strings.SplitN(row, " ", 3)[2]; strings.TrimSpace(got) != tc.want[i] {
						t.Errorf("%s: frame %d: %q, want %q", open.name, i+1, got, tc.want[i])
					}
				}
			}
			if tc.minor < 4 {
				// The chunk reader (iwarpdump -j N) leaves such a file
				// to a Source.
				if cr, err := capture.OpenChunks(path, 0); !errors.Is(err, capture.ErrNotChunked) {
					if cr != nil {
						cr.Close()
					}
					t.Errorf("OpenChunks: %v, want ErrNotChunked", err)
				}
			}
			if _, err := exec.LookPath("tshark"); err == nil || os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
				rows, _ := sourceRows(t, capture.Open, path)
				if ts := tsharkRows(t, path); strings.Join(ts, "\n") != strings.Join(rows, "\n") {
					t.Errorf("tshark reads\n%s\nwe read\n%s", strings.Join(ts, "\n"), strings.Join(rows, "\n"))
				}
			}
		})
	}

	// Versions neither tcpdump nor this package reads (tshark 4.0 reads
	// 2.5 and 3.x as 2.4; tcpdump refuses them, and so does the pcap
	// specification's reader, which knows 2.4 only).
	for _, v := range [][2]uint16{{2, 5}, {3, 4}, {1, 0}} {
		f := newPcapFile(binary.LittleEndian, false, 65535, layers.LinkTypeEthernet)
		f.add(t0, frames[0])
		b := f.bytes()
		binary.LittleEndian.PutUint16(b[4:6], v[0])
		binary.LittleEndian.PutUint16(b[6:8], v[1])
		_, err := capture.NewSource(strings.NewReader(string(b)), "v.pcap")
		want := fmt.Sprintf("capture: v.pcap: unsupported pcap version %d.%d", v[0], v[1])
		if !errors.Is(err, capture.ErrFormat) || err.Error() != want {
			t.Errorf("version %d.%d: %v, want %q (ErrFormat)", v[0], v[1], err, want)
		}
	}
}

// chunkRows reads path with a ChunkReader (iwarpdump -j N's reader) and
// returns a frameRow per frame and the error it ended with.
func chunkRows(t *testing.T, path string) ([]string, error) {
	t.Helper()
	cr, err := capture.OpenChunks(path, 0)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	w := cr.Walker()
	buf := make([]byte, 0, capture.ChunkSize)
	var rows []string
	for {
		ch, err := cr.Next(buf)
		if err != nil {
			if err == io.EOF {
				return rows, nil
			}
			return rows, err
		}
		w.Walk(ch, func(p *capture.Packet) { rows = append(rows, frameRow(p)) })
	}
}

// TestPcapngBlockLengthsDiffer reads pcapng files one of whose blocks
// ends with a total length other than the one it starts with
// (draft-ietf-opsawg-pcapng §3.1 repeats it at the end): one of the two
// lies, and the blocks after it cannot be trusted. tshark stops there
// ("total block lengths (first N and second M) don't match") after the
// frames before; we read on as if the first were right, a damaged file
// without a word. Every reader must stop at that block with ErrBadBlock,
// its offset and the frame it would have been.
func TestPcapngBlockLengthsDiffer(t *testing.T) {
	frames := threeFrames(t)
	type damage struct {
		block int    // which block (0: the SHB) gets the wrong trailing length
		end   uint32 // the trailing length written (0: the start's plus 4)
	}
	for _, tc := range []struct {
		name   string
		damage damage
		frames int // frames read before the damaged block (tshark's count)
		frame  uint64
	}{
		{"epb", damage{3, 999}, 1, 2},
		{"epb-first", damage{2, 0}, 0, 1},
		{"last-epb", damage{4, 4}, 2, 3},
		{"idb", damage{1, 77}, 0, 1},
		{"shb", damage{0, 99}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newNgFile(binary.LittleEndian)
			offs := []int{0, f.idb(layers.LinkTypeEthernet, 0, 0)}
			for i, fr := range frames {
				offs = append(offs, f.epb(0, t0.Add(time.Duration(i)*time.Millisecond), 6, uint32(len(fr)), uint32(len(fr)), fr))
			}
			b := bytes.Clone(f.bytes())
			at := offs[tc.damage.block]
			blen := binary.LittleEndian.Uint32(b[at+4:])
			end := tc.damage.end
			if end == 0 {
				end = blen + 4
			}
			binary.LittleEndian.PutUint32(b[at+int(blen)-4:], end)
			path := writeTemp(t, tc.name+".pcapng", b)
			want := fmt.Sprintf("malformed pcapng block: total length %d at its start, %d at its end", blen, end)
			for _, r := range []struct {
				name string
				read func() ([]string, error)
			}{
				{"Open", func() ([]string, error) { return sourceRows(t, capture.Open, path) }},
				{"OpenMapped", func() ([]string, error) { return sourceRows(t, capture.OpenMapped, path) }},
				{"NewSource", func() ([]string, error) {
					return sourceRows(t, func(string) (*capture.Source, error) {
						return capture.NewSource(bytes.NewReader(b), path)
					}, path)
				}},
				{"OpenChunks", func() ([]string, error) { return chunkRows(t, path) }},
			} {
				rows, err := r.read()
				if tc.damage.block == 0 && r.name == "OpenChunks" {
					// A damaged section header: the caller's Source
					// reports it.
					if !errors.Is(err, capture.ErrNotChunked) {
						t.Errorf("%s: %v, want ErrNotChunked", r.name, err)
					}
					continue
				}
				var fe *capture.FileError
				if len(rows) != tc.frames || !errors.As(err, &fe) || !errors.Is(err, capture.ErrBadBlock) ||
					fe.Frame != tc.frame || fe.Offset != int64(at) || !strings.HasSuffix(err.Error(), want) {
					t.Errorf("%s: %d frames, then %v; want %d, then frame %d at offset %d: ...%s",
						r.name, len(rows), err, tc.frames, tc.frame, at, want)
				}
			}
			if _, err := exec.LookPath("tshark"); err == nil || os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
				rows, _ := sourceRows(t, capture.Open, path)
				if ts := tsharkRows(t, path); strings.Join(ts, "\n") != strings.Join(rows, "\n") {
					t.Errorf("tshark reads\n%s\nwe read\n%s", strings.Join(ts, "\n"), strings.Join(rows, "\n"))
				}
			}
		})
	}
}

// TestVLANTagTypes reads frames whose VLAN tags have each EtherType tshark
// decodes as a tag: 0x8100 (802.1Q), 0x88a8 (802.1ad) and 0x9100, the
// QinQ tag of switches before 802.1ad, outer or inner. Frames behind a
// 0x9100 tag were KindOther, their TCP lost. 0x9200, which tshark does
// not decode as a tag, stays KindOther.
func TestVLANTagTypes(t *testing.T) {
	ip := ipv4TCP(t, []byte("tagged"))
	tagged := func(tpids ...uint16) []byte {
		b := []byte{0, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0x66, 0x77, 0x88, 0x99, 0xaa}
		for i, tpid := range tpids {
			b = binary.BigEndian.AppendUint16(b, tpid)
			b = binary.BigEndian.AppendUint16(b, uint16(10+i)) // VLAN id
		}
		return append(binary.BigEndian.AppendUint16(b, 0x0800), ip...)
	}
	cases := []struct {
		name  string
		frame []byte
		tcp   bool // tshark: tcp.srcport present
	}{
		{"8100", tagged(0x8100), true},
		{"88a8-8100", tagged(0x88a8, 0x8100), true},
		{"9100", tagged(0x9100), true},
		{"9100-8100", tagged(0x9100, 0x8100), true},
		{"8100-9100", tagged(0x8100, 0x9100), true},
		{"9200-8100", tagged(0x9200, 0x8100), false},
	}
	f := newPcapFile(binary.LittleEndian, false, 65535, layers.LinkTypeEthernet)
	for i, tc := range cases {
		f.add(t0.Add(time.Duration(i)*time.Second), tc.frame)
	}
	path := writeTemp(t, "vlan.pcap", f.bytes())
	pkts, err := readAll(t, f.bytes())
	if err != nil || len(pkts) != len(cases) {
		t.Fatalf("%d frames, %v", len(pkts), err)
	}
	for i, tc := range cases {
		p := pkts[i]
		if got := p.Kind == capture.KindTCP; got != tc.tcp || (got && (p.Src.Port() != 40000 || string(p.Payload) != "tagged")) {
			t.Errorf("%s: %v %v %q, want TCP %v", tc.name, p.Kind, p.Src, p.Payload, tc.tcp)
		}
	}
	if _, err := exec.LookPath("tshark"); err == nil || os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
		rows, _ := sourceRows(t, capture.Open, path)
		if ts := tsharkRows(t, path); strings.Join(ts, "\n") != strings.Join(rows, "\n") {
			t.Errorf("tshark reads\n%s\nwe read\n%s", strings.Join(ts, "\n"), strings.Join(rows, "\n"))
		}
	}
}
