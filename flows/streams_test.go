package flows_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestTCPStreamAsTshark checks every record's TCP stream number
// (tcp.stream) against tshark's for the record's frame, on a capture of
// every bundled Ethernet capture one after the other (iWARP over TCP, CM
// exchanges over RoCEv2 and SCTP associations, whose ids are not TCP
// streams, SYNs left unanswered, 4-tuples used again) and then all of
// them interleaved packet by packet; with one Decoder and with two
// workers.
func TestTCPStreamAsTshark(t *testing.T) {
	testutil.RequireTshark(t)
	var files []string
	for _, dir := range []string{"siw", "synth", "synthext", "rxe", "midstream"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*.pcap"))
		files = append(files, m...)
	}
	var all [][][]byte
	for _, f := range files {
		if frames := ethernetFrames(t, f); frames != nil {
			all = append(all, frames)
		}
	}
	if len(all) < 40 {
		t.Fatalf("%d Ethernet captures, want the bundled 40 or more", len(all))
	}
	// Each capture's copy has ports of its own: the bundled captures use
	// the same endpoints again with the same sequence numbers, which
	// Wireshark takes for the connection they had (see streams.go).
	var seq [][]byte
	for i, fr := range all {
		for _, f := range fr {
			seq = append(seq, rewriteTCP(f, uint16(i+1)<<9, 0))
		}
	}
	for i := 0; ; i++ {
		n := len(seq)
		for k, fr := range all {
			if i < len(fr) {
				seq = append(seq, rewriteTCP(fr[i], uint16(k+1)<<9|0x100, 0))
			}
		}
		if len(seq) == n {
			break
		}
	}
	// A 4-tuple used again, as a real one is: the first capture's
	// connections once more, on their endpoints of the first copy, with
	// new initial sequence numbers.
	for _, f := range all[0] {
		seq = append(seq, rewriteTCP(f, 1<<9, 0x10000000))
	}
	times := make([]time.Time, len(seq))
	for i := range times {
		times[i] = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC).Add(time.Duration(i+1) * time.Millisecond)
	}
	path, data := writePcap(t, "mixed.pcap", seq, times)
	want := testutil.TsharkColumn(t, []string{"-r", path, "-T", "fields", "-e", "frame.number", "-e", "tcp.stream"})
	for _, workers := range []int{0, 2, -2} {
		recs := recordsWith(t, data, workers)
		tcp, other := 0, 0
		streams := map[string]bool{}
		for _, r := range recs {
			st, ok := r.TCPStream()
			got := ""
			if ok {
				got = strconv.Itoa(st)
				tcp++
				streams[got] = true
			} else {
				other++
			}
			if w := want[r.Frame]; got != w {
				t.Errorf("workers %d: %s record of conn %d at frame %d: tcp.stream %q, tshark %q", workers, r.Type, r.Conn, r.Frame, got, w)
			}
		}
		// 73 captures' worth of connections, records of both kinds.
		if len(streams) < 80 || other < 50 {
			t.Errorf("workers %d: %d records of %d TCP streams, %d of other transports: too few", workers, tcp, len(streams), other)
		}
		t.Logf("workers %d: %d records of %d TCP streams and %d of other transports as tshark numbers them", workers, tcp, len(streams), other)
	}
}

// rewriteTCP returns a copy of an Ethernet frame whose TCP ports are
// XORed with key and whose sequence and acknowledgement numbers are moved
// by add (a frame that is not TCP over IPv4 or IPv6 is copied as it is).
func rewriteTCP(frame []byte, key uint16, add uint32) []byte {
	f := bytes.Clone(frame)
	off, etype := 14, uint16(0)
	if len(f) >= 14 {
		etype = binary.BigEndian.Uint16(f[12:])
	}
	if etype == 0x8100 && len(f) >= 18 {
		off, etype = 18, binary.BigEndian.Uint16(f[16:])
	}
	switch {
	case etype == 0x0800 && len(f) >= off+20 && f[off+9] == 6:
		off += int(f[off]&15) * 4
	case etype == 0x86dd && len(f) >= off+40 && f[off+6] == 6:
		off += 40
	default:
		return f
	}
	if len(f) < off+12 {
		return f
	}
	for _, o := range []int{off, off + 2} {
		binary.BigEndian.PutUint16(f[o:], binary.BigEndian.Uint16(f[o:])^key)
	}
	for _, o := range []int{off + 4, off + 8} {
		binary.BigEndian.PutUint32(f[o:], binary.BigEndian.Uint32(f[o:])+add)
	}
	return f
}

// ethernetFrames returns the frames of an Ethernet pcap file, nil for
// another link type.
func ethernetFrames(t *testing.T, path string) [][]byte {
	frames, _, eth := captureFrames(t, path)
	if !eth {
		return nil
	}
	return frames
}

// captureFrames returns the frames of a pcap or pcapng file with their
// timestamps, and whether its link type is Ethernet.
func captureFrames(t *testing.T, path string) ([][]byte, []time.Time, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
		LinkType() layers.LinkType
	}
	if r, err = pcapgo.NewReader(f); err != nil {
		// A pcapng file (testdata/midstream).
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if r, err = pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var frames [][]byte
	var ts []time.Time
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return frames, ts, r.LinkType() == layers.LinkTypeEthernet
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		frames, ts = append(frames, data), append(ts, ci.Timestamp)
	}
}

// writePcap writes Ethernet frames with their timestamps to a pcap file
// in a temporary directory and returns its path and contents.
func writePcap(t *testing.T, name string, frames [][]byte, ts []time.Time) (string, []byte) {
	t.Helper()
	var pcap bytes.Buffer
	pw := pcapgo.NewWriter(&pcap)
	if err := pw.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		if err := pw.WritePacket(gopacket.CaptureInfo{Timestamp: ts[i], CaptureLength: len(f), Length: len(f)}, f); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, pcap.Bytes()
}

// recordsWith decodes a capture with one Decoder (workers 0) or a Parallel
// of workers packets, or of -workers over the capture's chunks
// (DecodeChunks).
func recordsWith(t *testing.T, data []byte, workers int) []*flows.Record {
	t.Helper()
	pkts := testutil.ReadPackets(data)
	var recs []*flows.Record
	emit := func(r *flows.Record) { recs = append(recs, r) }
	if workers < 0 {
		path := filepath.Join(t.TempDir(), "chunks.pcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cr, err := capture.OpenChunks(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer cr.Close()
		p, err := flows.NewParallel(flows.Options{}, -workers, emit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.DecodeChunks(context.Background(), cr); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if workers == 0 {
		d := flows.NewDecoder(flows.Options{}, emit)
		for i := range pkts {
			d.Packet(&pkts[i])
		}
		d.Close()
		return recs
	}
	p, err := flows.NewParallel(flows.Options{}, workers, emit)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		p.Packet(&pkts[i])
	}
	p.Close()
	return recs
}
