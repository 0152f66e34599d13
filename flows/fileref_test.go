package flows_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/capture/pcapwriter"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestFileSameAsCopies: with reassembly.Options.File set to the capture,
// the streams compare retransmissions with the delivered octets read back
// from the file (capture.Packet.PayloadPos) instead of copies of them. The
// records must be the same: here a connection whose retransmissions carry
// changed octets (tcp.retransmit_conflict) and one whose retransmissions
// are duplicates, interleaved with the issue 6 workload (3 and 300 frames
// between their frames), in pcap and pcapng (read, mapped, and in chunks
// by two workers).
func TestFileSameAsCopies(t *testing.T) {
	var conflict []capture.Packet
	// Changed octets first, then the same octets again (a duplicate
	// retransmission must not come out as a conflict).
	for _, name := range []string{"retransmit-conflict", "retransmit-dup"} {
		sc, ok := synth.Named(name, 1)
		if !ok {
			t.Fatalf("no scenario %s", name)
		}
		var b bytes.Buffer
		if _, err := synth.Generate(sc, &b, io.Discard); err != nil {
			t.Fatal(err)
		}
		conflict = append(conflict, testutil.ReadPackets(b.Bytes())...)
	}
	var perf bytes.Buffer
	if err := synth.WritePerf(&perf, 8<<20, 1); err != nil {
		t.Fatal(err)
	}
	filler := testutil.ReadPackets(perf.Bytes())
	dir := t.TempDir()
	for _, format := range []pcapwriter.Format{pcapwriter.Pcap, pcapwriter.Pcapng} {
		for _, gap := range []int{3, 300} {
			name := "pcap"
			if format == pcapwriter.Pcapng {
				name = "pcapng"
			}
			name += " gap " + strconv.Itoa(gap)
			path := filepath.Join(dir, "mixed")
			writeMixed(t, path, format, conflict, filler, gap)
			copies, _, _ := decodeWith(t, path, capture.Open, false)
			if n := bytes.Count(copies, []byte("tcp.retransmit_conflict")); n != 2 {
				t.Fatalf("%s: %d conflicts found, want the 2 of retransmit-conflict", name, n)
			}
			for _, mapped := range []bool{false, true} {
				open := capture.Open
				if mapped {
					open = capture.OpenMapped
				}
				got, placed, payloads := decodeWith(t, path, open, true)
				if placed != payloads || placed < 50 {
					t.Fatalf("%s: %d packets of %d with a payload have a PayloadPos", name, placed, payloads)
				}
				sameLines(t, name+" from the file", got, copies)
			}
			// Two workers reading chunks compare with the file too
			// (capture.Chunk.Pos).
			got, _, _, ok := chunked(t, path, 2, 0)
			if !ok {
				t.Fatalf("%s: not read in chunks", name)
			}
			sameLines(t, name+" from the file, 2 workers", got, copies)
		}
	}
}

// writeMixed writes the frames of conflict at path, gap frames of filler
// after each.
func writeMixed(t *testing.T, path string, f pcapwriter.Format, conflict, filler []capture.Packet, gap int) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcapwriter.NewWriter(out, pcapwriter.Options{Format: f, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for _, p := range conflict {
		if err := w.WritePacket(p.TS, p.Data, p.WireLen); err != nil {
			t.Fatal(err)
		}
		for range gap {
			q := filler[k%len(filler)]
			k++
			if err := w.WritePacket(q.TS, q.Data, q.WireLen); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// decodeWith decodes the capture at path opened by open, with the Source
// as the streams' File when file is set, and returns the JSON Lines, how
// many packets had a PayloadPos and how many had a payload.
func decodeWith(t *testing.T, path string, open func(string) (*capture.Source, error), file bool) (out []byte, placed, payloads int) {
	t.Helper()
	src, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var opts flows.Options
	if file {
		opts.Reassembly.File = src
	}
	d := flows.NewDecoder(opts, func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		out = append(out, '\n')
	})
	var p capture.Packet
	for src.NextInto(&p) == nil {
		if len(p.Payload) > 0 {
			payloads++
		}
		if p.PayloadPos > 0 {
			if !bytes.Equal(readAt(t, src, p.PayloadPos, len(p.Payload)), p.Payload) {
				t.Fatalf("frame %d: the file at PayloadPos %d is not the payload", p.Frame, p.PayloadPos)
			}
			placed++
		}
		d.Packet(&p)
	}
	d.Close()
	return out, placed, payloads
}

func readAt(t *testing.T, src *capture.Source, pos int64, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if m, err := src.ReadAt(b, pos); m != n {
		t.Fatalf("ReadAt(%d, %d): %d, %v", pos, n, m, err)
	}
	return b
}
