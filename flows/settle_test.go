package flows_test

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/format"
	"github.com/iwarpkit/iwarpkit/internal/spill"
	"github.com/iwarpkit/iwarpkit/synth"
)

// resetAfterSends is a capture of n connections started gap apart, each
// sending sends Sends of 8 octets each way and then reset by its
// initiator.
func resetAfterSends(t *testing.T, n, sends int, gap time.Duration) []byte {
	conns := make([]synth.Conn, n)
	for i := range conns {
		c := seqConn(i, gap)
		c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
		c.Close = synth.Close{Kind: synth.CloseRST}
		for k := range 2 * sends {
			c.Ops = append(c.Ops, synth.Op{Dir: synth.Dir(k % 2), Kind: synth.Send, Size: 8})
		}
		conns[i] = c
	}
	return generate(t, conns)
}

// heapWith decodes a capture with the Decoder newDec makes and returns the
// heap in use after the last packet, before Close.
func heapWith(t *testing.T, data []byte, newDec func(flows.Options, func(*flows.Record)) *flows.Decoder) uint64 {
	t.Helper()
	src, err := capture.NewSource(bytes.NewReader(data), "heap")
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	dec := newDec(flows.Options{}, func(r *flows.Record) {
		if r.Type == flows.RecConn {
			summaries++
		}
	})
	var p capture.Packet
	for src.NextInto(&p) == nil {
		dec.Packet(&p)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	dec.Close()
	if summaries == 0 {
		t.Fatal("no connection summarised")
	}
	return ms.HeapAlloc
}

// TestResetSettled: a connection reset after octets has its summary at
// the end of the capture, but once the capture has moved on some minutes
// it retires (settle.go), keeping only the records it queues there: a
// capture of connections reset one after another, here every 10 seconds,
// holds the whole connections of the last minutes only (the rings of sent
// segments they keep for Terminates in flight took 11 KB a connection,
// the rest of each 3 KB). The output is what a Decoder that never settles
// prints, with any number of workers.
func TestResetSettled(t *testing.T) {
	const sends = 100 // rings of room for 128 segments: 4 KiB a direction
	per := func(newDec func(flows.Options, func(*flows.Record)) *flows.Decoder) int64 {
		small := heapWith(t, resetAfterSends(t, 40, sends, 10*time.Second), newDec)
		large := heapWith(t, resetAfterSends(t, 200, sends, 10*time.Second), newDec)
		return (int64(large) - int64(small)) / 160
	}
	settled, kept := per(flows.NewDecoder), per(flows.NewDecoderNoSettle)
	t.Logf("heap per connection reset after %d Sends each way: %d octets settled, %d kept", sends, settled, kept)
	if settled > 1536 {
		t.Errorf("%d octets of heap per reset connection, want at most 1536", settled)
	}
	if kept < 8192 {
		t.Errorf("a Decoder that never settles kept %d octets per reset connection: the capture does not test settling", kept)
	}

	pkts := packetsOf(t, resetAfterSends(t, 60, 30, 10*time.Second))
	want := jsonlWith(pkts, flows.Options{}, flows.NewDecoderNoSettle, true)
	sameLines(t, "settled", jsonlWith(pkts, flows.Options{}, flows.NewDecoder, true), want)
	checkSame(t, "reset connections", pkts)

	// The packed conn records in sorted runs in a temporary file, a few
	// records each (internal/spill): the same.
	defer flows.SetSpillBudget(spill.MinBudget)()
	sameLines(t, "settled, records spilled", jsonlWith(pkts, flows.Options{}, flows.NewDecoder, true), want)
	checkSame(t, "reset connections, records spilled", pkts)
}

// TestLateTerminate: a Terminate that comes after the reset of its
// connection is still matched to the segment it terminates (RFC 5040
// §4.8) when it comes within a few minutes of the connection's last
// packet, whatever other connections were reset meanwhile; one that comes
// later finds the connection retired, and starts a connection of its own,
// where it is still decoded. One Decoder and 1 to 4 workers agree.
func TestLateTerminate(t *testing.T) {
	c := seqConn(1000, 0)
	c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
	for range 5 {
		c.Ops = append(c.Ops, synth.Op{Dir: synth.I2R, Kind: synth.Send, Size: 16})
	}
	// The responder terminates the third Send (MSN 3, RFC 5040 §5.1).
	hdr := ddp.Header{L: true, DV: 1, ULPCtrl: uint8(rdmap.MakeControl(1, 0, rdmap.OpSend)), QN: 0, MSN: 3}
	c.Ops = append(c.Ops, synth.Op{Dir: synth.R2I, Kind: synth.Terminate, Term: rdmap.Terminate{
		Layer: uint8(rdmap.LayerDDP), EType: rdmap.ETypeDDPUntagged, Code: 0x01, M: true, D: true,
		DDPSegLen: 34, DDP: hdr, HasDDP: true}})
	c.Close = synth.Close{Kind: synth.CloseRST, By: synth.I2R}
	var b bytes.Buffer
	res, err := synth.Generate(synth.Scenario{Conns: []synth.Conn{c}}, &b, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The ground truth: the frame of the terminated Send and of the
	// Terminate.
	var sendFrame, termFrame uint64
	for _, r := range res.Records {
		f, ok := r.(*synth.TruthFPDU)
		if !ok || f.DDP == nil || f.RDMAP == nil {
			continue
		}
		switch {
		case f.Dir == "i2r" && f.DDP.QN != nil && *f.DDP.QN == 0 && f.DDP.MSN != nil && *f.DDP.MSN == 3:
			sendFrame = f.Frames[0]
		case f.RDMAP.Opcode == uint8(rdmap.OpTerminate):
			termFrame = f.Frames[0]
		}
	}
	pkts := packetsOf(t, b.Bytes())
	if sendFrame == 0 || termFrame == 0 || termFrame == uint64(len(pkts)) {
		t.Fatalf("truth: Send MSN 3 in frame %d, Terminate in frame %d of %d", sendFrame, termFrame, len(pkts))
	}
	last := pkts[len(pkts)-1]
	if last.Flags&capture.FlagRST == 0 {
		t.Fatalf("the connection ends with flags %v, not its reset", last.Flags)
	}
	// Other connections, reset after octets, to settle what they may.
	others := packetsOf(t, resetAfterSends(t, 30, 3, 20*time.Millisecond))

	for _, tc := range []struct {
		name        string
		after       time.Duration // the Terminate's time after the reset
		othersAfter time.Duration // the other connections' first packet's, or -1: none
		wantMatched bool
	}{
		{"a second after", time.Second, -1, true},
		{"a second after, others reset meanwhile", time.Second, 100 * time.Millisecond, true},
		{"a minute after, others reset meanwhile", time.Minute, time.Second, true},
		{"3 minutes after", 3 * time.Minute, -1, false},
		{"5 minutes after, others reset meanwhile", 5 * time.Minute, 4*time.Minute + 10*time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term := pkts[termFrame-1]
			var seq []capture.Packet
			for i, p := range pkts {
				if uint64(i+1) != termFrame {
					seq = append(seq, p)
				}
			}
			if tc.othersAfter >= 0 {
				shift := last.TS.Add(tc.othersAfter).Sub(others[0].TS)
				for _, p := range others {
					p.TS = p.TS.Add(shift)
					seq = append(seq, p)
				}
				if at := seq[len(seq)-1].TS; !at.Before(last.TS.Add(tc.after)) {
					t.Fatalf("the other connections end at %v, after the Terminate", at.Sub(last.TS))
				}
			}
			term.TS = last.TS.Add(tc.after)
			seq = append(seq, term)
			for i := range seq {
				seq[i].Frame = uint64(i + 1)
			}
			var got *flows.Record
			sendConn := -1
			d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
				if r.FPDU != nil && r.FPDU.Seg.Opcode == rdmap.OpTerminate {
					got = r
				}
				if r.Frame == sendFrame && r.FPDU != nil {
					sendConn = r.Conn
				}
			})
			for i := range seq {
				d.Packet(&seq[i])
			}
			d.Close()
			if got == nil {
				t.Fatal("no Terminate decoded")
			}
			matched := slices.ContainsFunc(got.FPDU.Findings, func(f dissect.Finding) bool { return f.Code == "rdmap.term_segment" })
			want := uint64(0)
			if tc.wantMatched {
				want = sendFrame
			}
			if got.FPDU.TermFrame != want || matched != tc.wantMatched {
				t.Errorf("the Terminate, %v after the reset: terminated segment in frame %d (finding %v), want %d",
					tc.after, got.FPDU.TermFrame, matched, want)
			}
			// Past the window, the connection has retired and the
			// Terminate starts one of its own (still decoded, midstream).
			if (got.Conn == sendConn) != tc.wantMatched {
				t.Errorf("the Terminate, %v after the reset: connection %d, the Send's %d", tc.after, got.Conn, sendConn)
			}
			checkSame(t, fmt.Sprintf("late Terminate, %s", tc.name), slices.Clone(seq))
		})
	}
}

// jsonlParallel is jsonlWith for a Parallel of the given workers.
func jsonlParallel(t *testing.T, pkts []capture.Packet, o flows.Options, workers int) []byte {
	t.Helper()
	var out []byte
	o.Recycle = true
	p, err := flows.NewParallel(o, workers, func(r *flows.Record) {
		out = format.AppendJSON(out, format.Fields(r))
		if r.FPDU != nil {
			out = fmt.Appendf(out, " preview %x", r.FPDU.Preview)
		}
		out = append(out, '\n')
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		p.Packet(&pkts[i])
	}
	p.Close()
	return out
}

// TestResetStorm: connections reset faster than Options.MaxResets can
// keep whole for minutes retire at once, the one reset the longest ago
// first, and a full connection table retires a reset connection rather
// than evict it with a cap.conn_evicted finding: with no packet after
// the resets, the output is what a Decoder that keeps every one whole in
// a table that never fills prints (each connection's summary at the end,
// in order of id), with 1 to 3 workers too, and the heap holds MaxResets
// whole connections rather than all of them.
func TestResetStorm(t *testing.T) {
	const n = 300
	data := resetAfterSends(t, n, 20, 10*time.Millisecond)
	pkts := packetsOf(t, data)
	want := jsonlWith(pkts, flows.Options{MaxConns: 1 << 20}, flows.NewDecoderNoSettle, true)
	// The generator's truth: n connections, each reset after its Sends.
	if got := bytes.Count(want, []byte(`"type":"conn"`)); got != n {
		t.Fatalf("reference: %d conn records, want %d", got, n)
	}
	if got := bytes.Count(want, []byte(`"state":"reset"`)); got != n {
		t.Fatalf("reference: %d connections reset, want %d", got, n)
	}
	for _, o := range []flows.Options{{MaxResets: 8}, {MaxConns: 32}, {MaxResets: 1, MaxConns: 16}} {
		name := fmt.Sprintf("MaxResets %d, MaxConns %d", o.MaxResets, o.MaxConns)
		sameLines(t, name, jsonlWith(pkts, o, flows.NewDecoder, true), want)
		for workers := 1; workers <= 3; workers++ {
			sameLines(t, fmt.Sprintf("%s, %d workers", name, workers), jsonlParallel(t, pkts, o, workers), want)
		}
	}

	capped := func(o flows.Options, emit func(*flows.Record)) *flows.Decoder {
		o.MaxResets = 16
		return flows.NewDecoder(o, emit)
	}
	small := resetAfterSends(t, 100, 20, 10*time.Millisecond)
	per := func(newDec func(flows.Options, func(*flows.Record)) *flows.Decoder) int64 {
		return (int64(heapWith(t, data, newDec)) - int64(heapWith(t, small, newDec))) / (n - 100)
	}
	storm, whole := per(capped), per(flows.NewDecoder)
	t.Logf("heap per connection of a storm of resets: %d octets with MaxResets 16, %d with all %d kept whole", storm, whole, n)
	if storm > whole/2 {
		t.Errorf("MaxResets 16: %d octets of heap per reset connection, want at most half of the %d with all kept whole", storm, whole)
	}
}

// TestRetiredAtClose: the summaries of retired connections, which Close
// emits from their packed form (retired.go), take their place in frame
// order among the other records Close emits: here the finding of a Write
// left incomplete at the start of the capture, on a connection still
// open, comes before the summaries of the connections reset after it,
// as a Decoder that keeps every one whole emits them; with 1 to 3
// workers too.
func TestRetiredAtClose(t *testing.T) {
	open := seqConn(999, 0)
	open.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
	open.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 16 << 10, STag: 7}}
	conns := []synth.Conn{open}
	for i := range 40 {
		c := seqConn(i, 20*time.Millisecond)
		c.StartDelay += 10 * time.Millisecond
		c.MPA = &synth.MPAParams{Request: synth.MPAFrame{Rev: 1, C: true}, Reply: synth.MPAFrame{Rev: 1, C: true}}
		c.Close = synth.Close{Kind: synth.CloseRST}
		c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Send, Size: 8}, {Dir: synth.R2I, Kind: synth.Send, Size: 8}}
		conns = append(conns, c)
	}
	all := packetsOf(t, generate(t, conns))
	// Drop the open connection's packets from its last data segment on:
	// its Write never completes, and what is said of it, about its first
	// frame, comes at Close.
	last := -1
	for i, p := range all {
		if p.Src == open.Initiator && len(p.Payload) > 0 {
			last = i
		}
	}
	var pkts []capture.Packet
	for i, p := range all {
		if i < last || (p.Src != open.Initiator && p.Dst != open.Initiator) {
			pkts = append(pkts, p)
		}
	}
	for i := range pkts {
		pkts[i].Frame = uint64(i + 1)
	}
	want := jsonlWith(pkts, flows.Options{MaxConns: 1 << 20}, flows.NewDecoderNoSettle, true)
	lines := bytes.Split(want, []byte("\n"))
	writeAt, firstReset := -1, -1
	for i, l := range lines {
		switch {
		case bytes.Contains(l, []byte(`"code":"ddp.message_incomplete"`)) && bytes.Contains(l, []byte(`"conn":0,`)) && writeAt < 0:
			writeAt = i
		case bytes.Contains(l, []byte(`"state":"reset"`)) && firstReset < 0:
			firstReset = i
		}
	}
	if writeAt < 0 || firstReset < 0 || writeAt > firstReset {
		t.Fatalf("reference: the Write's record at line %d, the first reset summary at line %d: the capture does not test the order", writeAt, firstReset)
	}
	o := flows.Options{MaxResets: 2}
	sameLines(t, "MaxResets 2", jsonlWith(pkts, o, flows.NewDecoder, true), want)
	for workers := 1; workers <= 3; workers++ {
		sameLines(t, fmt.Sprintf("MaxResets 2, %d workers", workers), jsonlParallel(t, pkts, o, workers), want)
	}
}
