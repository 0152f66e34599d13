package flows_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/damage"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestPartialStrip: stripping only the first octets of an FPDU with markers
// (the Decoder's default without a Payload callback) gives the records a
// whole strip gives, over every bundled capture, a generated workload with
// markers in half its connections, and damaged variants (bad CRCs, odd
// opcodes, non-zero pads, cut FPDUs).
func TestPartialStrip(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var sources [][]byte
	check := func(name string, pkts []capture.Packet) {
		t.Helper()
		sameLines(t, name, jsonlWith(pkts, flows.Options{}, flows.NewDecoder, true),
			jsonlWith(pkts, flows.Options{}, flows.NewDecoderFullStrip, true))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, data)
		check(filepath.Base(f), testutil.ReadPackets(data))
	}
	// Large FPDUs, with markers and without, each in its own segment or
	// straddling two, whose headers are not a data segment's: their decode
	// and checks look past the header, so they take the whole strip.
	big := bytes.Repeat([]byte("0123456789abcdef"), 40)
	for _, mk := range []bool{true, false} {
		for _, sg := range []synth.Segmentation{synth.SegmentPerRecord, synth.SegmentMSS} {
			crafted(t, check, &sources, mk, sg, big)
		}
	}

	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 4<<20, 5); err != nil {
		t.Fatal(err)
	}
	check("perf 4 MiB", testutil.ReadPackets(buf.Bytes()))
	sources = append(sources, buf.Bytes())
	n := 300
	if testing.Short() {
		n = 60
	}
	for _, v := range damage.Variants(11, n, sources) {
		check(v.Name, testutil.ReadPackets(v.Data))
	}
}

// crafted checks a connection, with markers or not, whose FPDUs of every
// kind are large enough to straddle TCP segments (SegmentMSS cuts them
// across), and adds it to sources.
func crafted(t *testing.T, check func(string, []capture.Packet), sources *[][]byte, mk bool, sg synth.Segmentation, big []byte) {
	c := baseConn(40100)
	c.MPA.Request.M, c.MPA.Reply.M = mk, mk
	c.Segmentation = sg
	c.Ops = opening()
	for _, seg := range []rdmap.Segment{
		untagged(rdmap.OpReadRequest, 1, 1, 0, true, big),
		untagged(rdmap.OpReadRequest, 1, 2, 0, true, big[:601]), // pads of 1 to 3 octets
		untagged(rdmap.OpTerminate, 2, 1, 0, true, big),
		untagged(rdmap.OpTerminate, 2, 2, 0, true, big[:602]),
		untagged(rdmap.Opcode(0xC), 0, 1, 0, true, big),
		untagged(rdmap.Opcode(0xC), 0, 2, 0, true, big[:603]),
		untagged(rdmap.OpImmediate, 0, 2, 0, true, big),
		untagged(rdmap.OpAtomicRequest, 1, 2, 0, true, big),
		untagged(rdmap.OpSend, 0, 3, 0, true, big),
		untagged(rdmap.OpSend, 0, 4, 0, true, big[:75]),
		untagged(rdmap.OpSend, 0, 5, 0, true, big[:3]),
	} {
		c.Ops = append(c.Ops, rawOp(synth.I2R, rdmap.AppendSegment(nil, seg)))
	}
	var out bytes.Buffer
	if _, err := synth.Generate(scenario(c), &out, nil); err != nil {
		t.Fatal(err)
	}
	check(fmt.Sprintf("crafted, markers %v, segmentation %d", mk, sg), testutil.ReadPackets(out.Bytes()))
	*sources = append(*sources, out.Bytes())
}
