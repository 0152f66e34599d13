package flows_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"runtime"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// longWrite is a capture of one connection sending an RDMA Write of size
// octets, and the same connection's messages are then written ahead.
func longWrite(t testing.TB, size int) []capture.Packet {
	t.Helper()
	c := synth.Conn{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40000"),
		Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: true,
		MSS:       1460,
		MPA:       &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}},
		Ops: []synth.Op{
			{Dir: synth.I2R, Kind: synth.Send, Size: 100},
			{Dir: synth.I2R, Kind: synth.Write, Size: size, STag: 7},
			{Dir: synth.R2I, Kind: synth.Send, Size: 100},
		},
	}
	var pcap bytes.Buffer
	if _, err := synth.Generate(synth.Scenario{Seed: 3, Conns: []synth.Conn{c}}, &pcap, nil); err != nil {
		t.Fatal(err)
	}
	return testutil.ReadPackets(pcap.Bytes())
}

// heldJSONL decodes pkts with workers workers (0: one Decoder) under
// Options.MaxHeld held, and returns the JSON Lines and Unordered.
func heldJSONL(t *testing.T, pkts []capture.Packet, workers, held int) ([]byte, uint64) {
	t.Helper()
	var out []byte
	emit := func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		out = append(out, '\n')
	}
	opts := flows.Options{MaxHeld: held, Recycle: true}
	if workers == 0 {
		d := flows.NewDecoder(opts, emit)
		for i := range pkts {
			d.Packet(&pkts[i])
		}
		d.Close()
		return out, d.Unordered()
	}
	p, err := flows.NewParallel(opts, workers, emit)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		p.Packet(&pkts[i])
	}
	p.Close()
	return out, p.Unordered()
}

// TestMaxHeld: records wait in frame order for a message still open only up
// to Options.MaxHeld. A Write of 200 FPDUs under a cap of 50: its FPDUs
// are written as they come, the message's record where it completes
// (after them), every record is still written once, and Unordered counts
// the records that came ahead of it; with workers, the same output. Under
// the default cap, the records are in frame order and none is unordered.
// And memory: a 32 MiB Write held its 23,000 FPDU records, 22 MB (the
// default was 1<<20); it now holds no more than DefaultMaxHeld.
func TestMaxHeld(t *testing.T) {
	pkts := longWrite(t, 200*1400)
	want, u := heldJSONL(t, pkts, 0, 0)
	if u != 0 {
		t.Fatalf("default cap: %d records unordered", u)
	}
	frames := func(out []byte) (fs []uint64, types []string) {
		for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			var r struct {
				Type  string `json:"type"`
				Frame uint64 `json:"frame"`
			}
			if err := json.Unmarshal(l, &r); err != nil {
				t.Fatal(err)
			}
			fs, types = append(fs, r.Frame), append(types, r.Type)
		}
		return fs, types
	}
	wf, _ := frames(want)
	for i := 1; i < len(wf); i++ {
		if wf[i] < wf[i-1] {
			t.Fatalf("default cap: record %d of frame %d after one of frame %d", i+1, wf[i], wf[i-1])
		}
	}
	got, u := heldJSONL(t, pkts, 0, 50)
	if u == 0 {
		t.Fatal("a cap of 50 records: none unordered")
	}
	// The same lines, each once, in another order.
	sortLines := func(b []byte) string {
		ls := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		m := map[string]int{}
		for _, l := range ls {
			m[string(l)]++
		}
		return fmt.Sprint(m)
	}
	if sortLines(got) != sortLines(want) {
		t.Fatal("a cap of 50 records: not the same records as under the default cap")
	}
	gf, gt := frames(got)
	late := 0
	for i := 1; i < len(gf); i++ {
		if gf[i] < gf[i-1] {
			late++
			if gt[i] != "message" {
				t.Errorf("a %s record of frame %d after a record of frame %d", gt[i], gf[i], gf[i-1])
			}
		}
	}
	if late != 1 {
		t.Errorf("%d records out of frame order, want 1 (the Write's message record)", late)
	}
	t.Logf("%d records, %d unordered under a cap of 50", len(gf), u)
	for _, n := range []int{1, 2, 3} {
		pg, pu := heldJSONL(t, pkts, n, 50)
		sameLines(t, fmt.Sprintf("cap of 50, %d workers", n), pg, got)
		if pu != u {
			t.Errorf("%d workers: %d unordered, one Decoder %d", n, pu, u)
		}
	}

	// Memory under the default cap.
	big := longWrite(t, 32<<20)
	d := flows.NewDecoder(flows.Options{Recycle: true}, func(*flows.Record) {})
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	for i := range big[:len(big)-20] {
		d.Packet(&big[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	held := int64(ms.HeapAlloc) - int64(before)
	runtime.KeepAlive(big)
	d.Close()
	t.Logf("heap in the middle of a 32 MiB Write: %d KiB", held>>10)
	if held > 18<<20 {
		t.Errorf("heap in the middle of a 32 MiB Write: %d MiB, want at most 18", held>>20)
	}
}
