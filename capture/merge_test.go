package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// stamped is one frame of a test file: its timestamp offset from t0 and a
// tag octet in the payload that identifies it.
type stamped struct {
	at  time.Duration
	tag byte
}

// pcapOf builds a nanosecond Ethernet pcap whose frames carry the tags.
func pcapOf(t testing.TB, frames ...stamped) []byte {
	f := newPcapFile(binary.LittleEndian, true, 262144, layers.LinkTypeEthernet)
	for _, s := range frames {
		f.add(t0.Add(s.at), ether(t, ipv4TCP(t, []byte{s.tag})))
	}
	return f.bytes()
}

func newSource(t testing.TB, name string, file []byte) *capture.Source {
	t.Helper()
	s, err := capture.NewSource(bytes.NewReader(file), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// got is what a test records of one merged packet.
type got struct {
	frame   uint64
	tag     byte
	input   int
	inFrame uint64
}

// tagsOf is the tags of merged packets, in order.
func tagsOf(out []got) string {
	var tags []byte
	for _, g := range out {
		tags = append(tags, g.tag)
	}
	return string(tags)
}

func drain(t *testing.T, m *capture.Merge) ([]got, error) {
	t.Helper()
	var out []got
	for {
		p, err := m.Next()
		if err != nil {
			return out, err
		}
		if len(p.Payload) != 1 {
			t.Fatalf("frame %d: payload %x", p.Frame, p.Payload)
		}
		out = append(out, got{p.Frame, p.Payload[0], m.Input(), m.InputFrame()})
	}
}

func TestMergeOrder(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		inputs [][]stamped
		want   []got
	}{
		{
			name: "interleaved",
			inputs: [][]stamped{
				{{1 * ms, 'a'}, {4 * ms, 'b'}, {5 * ms, 'c'}},
				{{2 * ms, 'x'}, {3 * ms, 'y'}, {6 * ms, 'z'}},
			},
			want: []got{{1, 'a', 0, 1}, {2, 'x', 1, 1}, {3, 'y', 1, 2}, {4, 'b', 0, 2}, {5, 'c', 0, 3}, {6, 'z', 1, 3}},
		},
		{
			// Equal timestamps: input order decides, every time.
			name: "ties",
			inputs: [][]stamped{
				{{1 * ms, 'a'}, {1 * ms, 'b'}},
				{{1 * ms, 'x'}},
				{{0, 'p'}, {1 * ms, 'q'}},
			},
			want: []got{{1, 'p', 2, 1}, {2, 'a', 0, 1}, {3, 'b', 0, 2}, {4, 'x', 1, 1}, {5, 'q', 2, 2}},
		},
		{
			// An input whose clock steps back keeps its own order: only
			// the heads are compared.
			name: "backwards",
			inputs: [][]stamped{
				{{5 * ms, 'a'}, {1 * ms, 'b'}, {6 * ms, 'c'}},
				{{2 * ms, 'x'}, {7 * ms, 'y'}},
			},
			want: []got{{1, 'x', 1, 1}, {2, 'a', 0, 1}, {3, 'b', 0, 2}, {4, 'c', 0, 3}, {5, 'y', 1, 2}},
		},
		{
			name:   "one-input",
			inputs: [][]stamped{{{3 * ms, 'a'}, {1 * ms, 'b'}}},
			want:   []got{{1, 'a', 0, 1}, {2, 'b', 0, 2}},
		},
		{
			name:   "empty-inputs",
			inputs: [][]stamped{{}, {{1 * ms, 'a'}}, {}},
			want:   []got{{1, 'a', 1, 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srcs := make([]*capture.Source, len(tc.inputs))
			for i, in := range tc.inputs {
				srcs[i] = newSource(t, tc.name, pcapOf(t, in...))
			}
			m := capture.NewMerge(srcs...)
			out, err := drain(t, m)
			if err != io.EOF {
				t.Fatalf("end: %v, want io.EOF", err)
			}
			// The same inputs as files, merged with inputs parked
			// until needed, read and mapped.
			dir := t.TempDir()
			var paths []string
			for i, in := range tc.inputs {
				p := filepath.Join(dir, strconv.Itoa(i)+".pcap")
				if err := os.WriteFile(p, pcapOf(t, in...), 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			for _, open := range []func(...string) (*capture.Merge, error){capture.OpenMerge, capture.OpenMergeMapped} {
				fm, err := open(paths...)
				if err != nil {
					t.Fatal(err)
				}
				fout, ferr := drain(t, fm)
				if ferr != io.EOF || !slices.Equal(fout, out) {
					t.Errorf("from files: %+v, %v; want %+v", fout, ferr, out)
				}
				fm.Close()
			}
			if len(out) != len(tc.want) {
				t.Fatalf("got %d packets %+v, want %d", len(out), out, len(tc.want))
			}
			for i := range out {
				if out[i] != tc.want[i] {
					t.Errorf("packet %d: got %+v, want %+v", i, out[i], tc.want[i])
				}
			}
			if _, err := m.Next(); err != io.EOF {
				t.Errorf("after the end: %v, want sticky io.EOF", err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Next(); !errors.Is(err, capture.ErrClosed) {
				t.Errorf("after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestMergeNoInputs: nothing to read is a clean, empty stream.
func TestMergeNoInputs(t *testing.T) {
	m := capture.NewMerge()
	if _, err := m.Next(); err != io.EOF {
		t.Fatalf("got %v, want io.EOF", err)
	}
	if m.Input() != -1 || m.LinkType(0) != capture.LinkTypeUnknown {
		t.Errorf("Input %d LinkType %v before any packet", m.Input(), m.LinkType(0))
	}
}

// TestMergeSingleIsSource: one input merges to exactly the file: frame
// numbers, timestamps, kinds and octets, on real captures.
func TestMergeSingleIsSource(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/siw/*.pcap")
	if len(paths) == 0 {
		t.Skip("no testdata/siw captures")
	}
	for _, path := range paths {
		a, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := capture.OpenMerge(path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			pa, ea := a.Next()
			pm, em := m.Next()
			if ea != nil || em != nil {
				if ea != io.EOF || em != io.EOF {
					t.Errorf("%s: ends %v and %v", path, ea, em)
				}
				break
			}
			n++
			if pa.Frame != pm.Frame || !pa.TS.Equal(pm.TS) || pa.Kind != pm.Kind || pa.Src != pm.Src ||
				!bytes.Equal(pa.Data, pm.Data) || m.InputFrame() != pa.Frame || m.Input() != 0 {
				t.Fatalf("%s: frame %d differs", path, pa.Frame)
			}
		}
		if n == 0 {
			t.Errorf("%s: no packets", path)
		}
		a.Close()
		m.Close()
	}
}

// TestMergeDamagedInput: a truncated input still gives every intact
// packet, the other inputs read on to their end, and then its error comes.
func TestMergeDamagedInput(t *testing.T) {
	ms := time.Millisecond
	good := pcapOf(t, stamped{1 * ms, 'a'}, stamped{4 * ms, 'b'}, stamped{6 * ms, 'c'})
	bad := pcapOf(t, stamped{2 * ms, 'x'}, stamped{3 * ms, 'y'}, stamped{5 * ms, 'z'})
	bad = bad[:len(bad)-5] // cut into the last record
	m := capture.NewMerge(newSource(t, "good", good), newSource(t, "bad", bad))
	out, err := drain(t, m)
	var fe *capture.FileError
	if !errors.As(err, &fe) || fe.File != "bad" || fe.Frame != 3 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("end: %v, want the truncation of bad frame 3", err)
	}
	if tags := tagsOf(out); tags != "axybc" {
		t.Errorf("got %q, want axybc", tags)
	}
	if _, err2 := m.Next(); err2 != err {
		t.Errorf("error not sticky: %v", err2)
	}
}

// TestMergeLinkTypesAndFormats: inputs of different formats and link types
// merge; LinkType and Format answer for the input of the last packet.
func TestMergeLinkTypesAndFormats(t *testing.T) {
	eth := newPcapFile(binary.BigEndian, false, 65535, layers.LinkTypeEthernet)
	eth.add(t0.Add(time.Millisecond), ether(t, ipv4TCP(t, []byte{'e'})))
	ngb := newNgFile(binary.LittleEndian)
	ngb.idb(layers.LinkTypeRaw, 0, 9)
	ngb.idb(layers.LinkTypeLinuxSLL, 0, 9)
	raw := ipv6TCP(t, []byte{'r'})
	ngb.epb(0, t0, 9, uint32(len(raw)), uint32(len(raw)), raw)
	s := sll(ipv4TCP(t, []byte{'s'}))
	ngb.epb(1, t0.Add(2*time.Millisecond), 9, uint32(len(s)), uint32(len(s)), s)

	m := capture.NewMerge(newSource(t, "eth", eth.bytes()), newSource(t, "ng", ngb.bytes()))
	if f := m.Format(0); f.Pcapng || f.Nanos {
		t.Errorf("Format(0) = %+v, want microsecond pcap", f)
	}
	if f := m.Format(1); !f.Pcapng {
		t.Errorf("Format(1) = %+v, want pcapng", f)
	}
	want := []struct {
		tag   byte
		link  layers.LinkType
		input int
	}{{'r', layers.LinkTypeRaw, 1}, {'e', layers.LinkTypeEthernet, 0}, {'s', layers.LinkTypeLinuxSLL, 1}}
	for i, w := range want {
		p, err := m.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p.Frame != uint64(i+1) || len(p.Payload) != 1 || p.Payload[0] != w.tag || m.Input() != w.input ||
			m.LinkType(p.Interface) != w.link {
			t.Errorf("packet %d: frame %d payload %q input %d link %v, want %c from %d (%v)",
				i, p.Frame, p.Payload, m.Input(), m.LinkType(p.Interface), w.tag, w.input, w.link)
		}
	}
	if _, err := m.Next(); err != io.EOF {
		t.Errorf("end: %v", err)
	}
}

func TestOpenMergeError(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.pcap")
	if err := os.WriteFile(ok, pcapOf(t, stamped{0, 'a'}), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := capture.OpenMerge(ok, filepath.Join(dir, "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want a not-exist error", err)
	}
	m, err := capture.OpenMerge(ok, ok)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Len() != 2 || m.Name(1) != ok || m.Source(1) != nil {
		t.Errorf("Len %d Name(1) %q Source(1) %v (parked: nil)", m.Len(), m.Name(1), m.Source(1))
	}
}

// TestOpenMergeNotCaptures: of several files, those that open but hold no
// capture (empty, not a capture, a header cut short: the last file of a
// rotated capture, a wrong glob) end at once; every packet of the others
// still comes, in order, and the end names each bad file, in input order.
// A single such file is still an error of OpenMerge.
func TestOpenMergeNotCaptures(t *testing.T) {
	dir := t.TempDir()
	ms := time.Millisecond
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.pcap", pcapOf(t, stamped{1 * ms, 'a'}, stamped{3 * ms, 'c'}))
	empty := write("empty.pcap", nil)
	text := write("text.pcap", []byte("hello world\n"))
	b := write("b.pcap", pcapOf(t, stamped{2 * ms, 'b'}, stamped{4 * ms, 'd'}))
	short := write("short.pcap", pcapOf(t)[:10])
	for _, open := range []struct {
		name string
		f    func(...string) (*capture.Merge, error)
	}{{"read", capture.OpenMerge}, {"mapped", capture.OpenMergeMapped}} {
		t.Run(open.name, func(t *testing.T) {
			m, err := open.f(a, empty, text, b, short)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			out, err := drain(t, m)
			if tags := tagsOf(out); tags != "abcd" {
				t.Errorf("got %q, want abcd", tags)
			}
			if out[1].input != 3 || out[1].inFrame != 1 || out[3].frame != 4 {
				t.Errorf("packets %+v: want b's first packet from input 3, frames 1-4", out)
			}
			var fe *capture.FileError
			if !errors.As(err, &fe) || fe.File != empty {
				t.Fatalf("end: %v, want the empty file first", err)
			}
			for _, p := range []string{empty, text, short} {
				if !bytes.Contains([]byte(err.Error()), []byte(p)) {
					t.Errorf("end %q does not name %s", err, p)
				}
			}
			if m.Name(1) != empty || m.Name(4) != short {
				t.Errorf("Name(1) %q Name(4) %q", m.Name(1), m.Name(4))
			}
			if _, err2 := m.Next(); err2 != err {
				t.Errorf("error not sticky: %v", err2)
			}
		})
	}
	if _, err := capture.OpenMerge(text); err == nil {
		t.Error("a single file that is not a capture opened")
	}
	if _, err := capture.OpenMerge(a, empty, filepath.Join(dir, "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}

// TestMergeNoAllocs: merging adds no allocation per packet to reading.
func TestMergeNoAllocs(t *testing.T) {
	payload := bytes.Repeat([]byte{0xa5}, 1460)
	frame := ether(t, ipv4TCP(t, payload))
	srcs := make([]*capture.Source, 4)
	for i := range srcs {
		srcs[i] = endlessPcap(t, layers.LinkTypeEthernet, frame)
	}
	m := capture.NewMerge(srcs...)
	for range 200 {
		if _, err := m.Next(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := m.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per packet, want 0", allocs)
	}
}

func BenchmarkMerge(b *testing.B) {
	payload := bytes.Repeat([]byte{0xa5}, 1460)
	frame := ether(b, ipv4TCP(b, payload))
	for _, n := range []int{1, 4, 32} {
		b.Run(strconv.Itoa(n)+"-inputs", func(b *testing.B) {
			srcs := make([]*capture.Source, n)
			for i := range srcs {
				srcs[i] = endlessPcap(b, layers.LinkTypeEthernet, frame)
			}
			m := capture.NewMerge(srcs...)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Read the rotated files of one capture as a single stream.
func ExampleMerge() {
	m, err := capture.OpenMerge(
		filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"),
		filepath.Join("..", "testdata", "siw", "nocrc_v1_rping.pcap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	var n uint64
	for {
		p, err := m.Next()
		if err != nil {
			break
		}
		n = p.Frame // numbered in merged order
	}
	a, _ := capture.Open(filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"))
	defer a.Close()
	var na uint64
	for {
		p, err := a.Next()
		if err != nil {
			break
		}
		na = p.Frame
	}
	fmt.Println(n > na)
	// Output: true
}
