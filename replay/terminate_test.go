package replay

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
)

// rawResponder is a hand-written MPA responder for tests: it reads the
// Request, answers with reply (unless nil), runs act, then reads what the
// initiator sends until it closes.
type rawResponder struct {
	ln   *net.TCPListener
	done chan rawResult
}

type rawResult struct {
	req  mpa.Frame
	rest []byte // what followed the Request
	err  error
}

func startRawResponder(t *testing.T, reply *mpa.Frame, act func(c *net.TCPConn, req mpa.Frame)) *rawResponder {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &rawResponder{ln: ln, done: make(chan rawResult, 1)}
	go func() {
		var res rawResult
		defer func() { r.done <- res }()
		ln.SetDeadline(time.Now().Add(10 * time.Second))
		c, err := ln.AcceptTCP()
		if err != nil {
			res.err = err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var buf []byte
		tmp := make([]byte, 64<<10)
		for {
			f, n, err := mpa.DecodeFrame(buf)
			if err == nil {
				res.req = f
				res.req.PD = append([]byte(nil), f.PD...)
				buf = buf[n:]
				break
			}
			k, rerr := c.Read(tmp)
			if rerr != nil {
				res.err = rerr
				return
			}
			buf = append(buf, tmp[:k]...)
		}
		if reply != nil {
			if _, err := c.Write(mpa.AppendFrame(nil, *reply)); err != nil {
				res.err = err
				return
			}
		}
		if act != nil {
			act(c, res.req)
		}
		for {
			k, rerr := c.Read(tmp)
			buf = append(buf, tmp[:k]...)
			if rerr != nil {
				break
			}
		}
		res.rest = buf
	}()
	return r
}

// terminates decodes the FPDUs in wire (stream offset origin onwards) and
// returns the Terminate headers among them.
func terminates(t *testing.T, wire []byte, origin uint64, markersOn, crc bool) []rdmap.Terminate {
	t.Helper()
	df := NewDeframer(origin, markersOn, crc)
	var out []rdmap.Terminate
	for len(wire) > 0 {
		p, n, err := df.Next(wire)
		if err != nil {
			t.Fatalf("initiator's FPDU at %d: %v", df.Off, err)
		}
		if n == 0 {
			t.Fatalf("%d octets left after the last whole FPDU", len(wire))
		}
		wire = wire[n:]
		seg, err := rdmap.Decode(p.ULPDU)
		if err != nil {
			t.Fatalf("initiator's segment: %v", err)
		}
		if seg.Opcode == rdmap.OpTerminate {
			if seg.DDP.QN != ddp.QNTerminate || !seg.DDP.L {
				t.Errorf("Terminate on QN %d L=%v", seg.DDP.QN, seg.DDP.L)
			}
			out = append(out, seg.Term)
		}
	}
	return out
}

// TestTerminate sends invalid FPDUs to the engine (playing the initiator)
// from a hand-written responder, and checks the Terminate the engine answers
// with. The expected Layer/EType/Code values are those of PROTOCOL.md A.7
// (LLP), C (DDP) and D.4 (RDMAP), RFC 5044 §8, RFC 5041 §7, RFC 5040 §4.8.
func TestTerminate(t *testing.T) {
	scripts := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	reply := mpa.Frame{Kind: mpa.KindReply, Rev: 2, C: true, S: true, PD: mpa.AppendEnhanced(nil, mpa.Enhanced{IRD: 4, ORD: 4})}
	send := rdmap.Segment{DDP: ddp.Header{L: true, DV: 1, QN: 0, MSN: 1}, RV: 1, Opcode: rdmap.OpSend, Payload: []byte("0123456789abcdef")}
	write := rdmap.Segment{DDP: ddp.Header{T: true, L: true, DV: 1, STag: 0x1234, TO: 0x1000}, RV: 1, Opcode: rdmap.OpWrite, Payload: []byte("payload")}
	with := func(s rdmap.Segment, f func(*rdmap.Segment)) rdmap.Segment { f(&s); return s }

	tests := []struct {
		name        string
		seg         rdmap.Segment
		corrupt     func(wire []byte) // after framing
		markersR2I  bool
		layer       rdmap.TermLayer
		etype, code uint8
		withDDP     bool
		err         error
	}{
		{name: "bad CRC", seg: send, corrupt: func(w []byte) { w[len(w)-1] ^= 0xFF }, layer: rdmap.LayerLLP, etype: 0, code: 0x02, err: dissect.ErrBadCRC},
		{name: "marker FPDUPTR wrong", seg: send, markersR2I: true, corrupt: func(w []byte) {
			// The FPDU starts on the grid: its first four octets are a
			// marker with FPDUPTR 0. Point it elsewhere and fix the CRC
			// (which covers markers), so that only the marker is wrong.
			w[3] = 8
			binary.LittleEndian.PutUint32(w[len(w)-4:], mpa.CRC32C(w[:len(w)-4]))
		}, layer: rdmap.LayerLLP, etype: 0, code: 0x03, err: dissect.ErrMarkerMismatch},
		{name: "DDP version 0 untagged", seg: with(send, func(s *rdmap.Segment) { s.DDP.DV = 0 }), layer: rdmap.LayerDDP, etype: 2, code: 0x06, withDDP: true, err: dissect.ErrBadVersion},
		{name: "DDP version 0 tagged", seg: with(write, func(s *rdmap.Segment) { s.DDP.DV = 0 }), layer: rdmap.LayerDDP, etype: 1, code: 0x04, withDDP: true, err: dissect.ErrBadVersion},
		{name: "DDP version 2", seg: with(send, func(s *rdmap.Segment) { s.DDP.DV = 2 }), layer: rdmap.LayerDDP, etype: 2, code: 0x06, withDDP: true, err: dissect.ErrBadVersion},
		{name: "invalid QN", seg: with(send, func(s *rdmap.Segment) { s.DDP.QN = 9 }), layer: rdmap.LayerDDP, etype: 2, code: 0x01, withDDP: true},
		{name: "RDMAP version 0", seg: with(send, func(s *rdmap.Segment) { s.RV = 0 }), layer: rdmap.LayerRDMAP, etype: 2, code: 0x05, withDDP: true, err: dissect.ErrBadVersion},
		{name: "unknown opcode", seg: with(send, func(s *rdmap.Segment) { s.Opcode = 0xC }), layer: rdmap.LayerRDMAP, etype: 2, code: 0x06, withDDP: true, err: dissect.ErrUnknownOpcode},
		// The first Send on queue 0 has MSN 1 (PROTOCOL.md C), and a
		// message starts at MO 0: RFC 5041 §7.2's Untagged Buffer Errors
		// 0x03 and 0x04 (PROTOCOL.md C table; Linux siw siw_qp_rx.c).
		{name: "MSN out of range", seg: with(send, func(s *rdmap.Segment) { s.DDP.MSN = 5 }), layer: rdmap.LayerDDP, etype: 2, code: 0x03, withDDP: true},
		{name: "first segment past MO 0", seg: with(send, func(s *rdmap.Segment) { s.DDP.MO = 100 }), layer: rdmap.LayerDDP, etype: 2, code: 0x04, withDDP: true},
		{name: "Send on a tagged segment", seg: with(send, func(s *rdmap.Segment) { s.DDP.T = true; s.DDP.STag = 7 }), layer: rdmap.LayerRDMAP, etype: 2, code: 0x06, withDDP: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ulpdu := rdmap.AppendSegment(nil, tc.seg)
			r := startRawResponder(t, &reply, func(c *net.TCPConn, req mpa.Frame) {
				fr := NewFramer(uint64(mpa.HeaderLen+len(reply.PD)), req.M, true)
				wire, err := fr.AppendFPDU(nil, ulpdu)
				if err != nil {
					t.Error(err)
					return
				}
				if tc.corrupt != nil {
					tc.corrupt(wire)
				}
				c.Write(wire)
			})
			o := Options{}
			o.Timeouts.Idle = 500 * time.Millisecond
			o.Timeouts.Wait = 2 * time.Second
			if tc.markersR2I {
				o.Negotiation.MarkersR2I = ptr(true)
			}
			rep, err := Connect(context.Background(), r.ln.Addr().String(), scripts, o)
			if err != nil {
				t.Fatal(err)
			}
			res := <-r.done
			if res.err != nil {
				t.Fatalf("responder: %v", res.err)
			}
			side := rep.Conns[0].Sides[I2R]
			if side.Err == nil || (tc.err != nil && !errors.Is(side.Err, tc.err)) {
				t.Errorf("engine error %v, want %v", side.Err, tc.err)
			} else {
				t.Logf("engine: %v", side.Err)
			}
			terms := terminates(t, res.rest, uint64(mpa.HeaderLen+len(res.req.PD)), reply.M, true)
			if len(terms) != 1 {
				t.Fatalf("%d Terminates, want 1", len(terms))
			}
			term := terms[0]
			if term.Layer != uint8(tc.layer) || term.EType != tc.etype || term.Code != tc.code {
				t.Errorf("Terminate %d/%d/0x%02x (%s), want %d/%d/0x%02x", term.Layer, term.EType, term.Code, term.Explain(), tc.layer, tc.etype, tc.code)
			}
			if tc.withDDP {
				want, _, _ := ddp.Decode(ulpdu)
				if !term.D || !term.M || !term.HasDDP || term.DDP != want || int(term.DDPSegLen) != len(ulpdu) {
					t.Errorf("Terminate headers M=%v D=%v len %d DDP %+v, want the offending segment's (%d octets) %+v", term.M, term.D, term.DDPSegLen, term.DDP, len(ulpdu), want)
				}
			} else if term.M || term.D || term.R {
				t.Errorf("LLP Terminate with M=%v D=%v R=%v; PROTOCOL.md D.4 Figure 10 says no headers", term.M, term.D, term.R)
			}
			if side.TermSent == nil || *side.TermSent != term {
				t.Errorf("report TermSent %+v, sent %+v", side.TermSent, term)
			}
			if !strings.Contains(rep.Conns[0].Err.Error(), "Terminate") {
				t.Errorf("report error %q does not mention the Terminate", rep.Conns[0].Err)
			}
		})
	}
}

// TestGarbagePeer: a responder that answers the MPA Request with something
// else ends the connection with a clear error, and the engine sends
// Terminate LLP/MPA 0x04 as Linux siw does; an initiator that sends garbage
// to the engine's responder is refused the same way.
func TestGarbagePeer(t *testing.T) {
	scripts := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	o := Options{}
	o.Timeouts.Idle = 300 * time.Millisecond
	o.Timeouts.Handshake = 2 * time.Second
	r := startRawResponder(t, nil, func(c *net.TCPConn, req mpa.Frame) {
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
	})
	rep, err := Connect(context.Background(), r.ln.Addr().String(), scripts, o)
	if err != nil {
		t.Fatal(err)
	}
	res := <-r.done
	cerr := rep.Conns[0].Err
	if !errors.Is(cerr, dissect.ErrNotMPA) || !strings.Contains(cerr.Error(), "instead of an MPA Reply") {
		t.Errorf("error %v, want a clear not-MPA error", cerr)
	}
	terms := terminates(t, res.rest, uint64(mpa.HeaderLen+len(res.req.PD)), false, res.req.C)
	if len(terms) != 1 || terms[0].Layer != uint8(rdmap.LayerLLP) || terms[0].Code != 0x04 {
		t.Errorf("Terminates %+v, want one LLP/MPA 0x04", terms)
	}

	// Garbage to the engine's responder.
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [64]byte
		c.Read(b[:])
	}()
	rep, err = Listen(context.Background(), ln, scripts, o)
	if err != nil {
		t.Fatal(err)
	}
	if cerr := rep.Conns[0].Err; !errors.Is(cerr, dissect.ErrNotMPA) || !strings.Contains(cerr.Error(), "instead of an MPA Request") {
		t.Errorf("error %v, want a clear not-MPA error", cerr)
	}
}

// TestResetPeer: a responder that resets the connection in the middle of
// the exchange ends it with a clear error, well before any timeout.
func TestResetPeer(t *testing.T) {
	scripts := load(t, "../testdata/siw/crc_v2_iwtest_ops.pcap", LoadOptions{})
	reply := mpa.Frame{Kind: mpa.KindReply, Rev: 2, C: true, S: true, PD: mpa.AppendEnhanced(nil, mpa.Enhanced{IRD: 4, ORD: 4})}
	r := startRawResponder(t, &reply, func(c *net.TCPConn, req mpa.Frame) {
		// Let the initiator send, then reset without reading.
		time.Sleep(100 * time.Millisecond)
		c.SetLinger(0)
		c.Close()
	})
	o := Options{}
	o.Timeouts.Wait = 10 * time.Second
	start := time.Now()
	rep, err := Connect(context.Background(), r.ln.Addr().String(), scripts, o)
	if err != nil {
		t.Fatal(err)
	}
	<-r.done
	cerr := rep.Conns[0].Err
	if cerr == nil || !(errors.Is(cerr, errPeerReset) || errors.Is(cerr, errPeerClosed)) {
		t.Errorf("error %v, want peer reset", cerr)
	} else {
		t.Logf("engine: %v", cerr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v: the reset should end the connection at once", d)
	}
}
