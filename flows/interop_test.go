package flows_test

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

func interopConn(req, rep synth.MPAFrame, ops bool) synth.Conn {
	c := synth.Conn{
		Initiator: netip.MustParseAddrPort("192.0.2.2:40100"),
		Responder: netip.MustParseAddrPort("192.0.2.1:7174"),
		Handshake: true,
		MPA:       &synth.MPAParams{Request: req, Reply: rep},
	}
	if ops {
		c.Ops = []synth.Op{
			{Dir: synth.I2R, Kind: synth.Send, Size: 64},
			{Dir: synth.R2I, Kind: synth.Send, Size: 64},
			{Dir: synth.I2R, Kind: synth.Write, Size: 1600, STag: 0x1000, TO: 0x10000},
			{Dir: synth.R2I, Kind: synth.Write, Size: 900, STag: 0x2000},
		}
	} else {
		c.Close = synth.Close{Kind: synth.CloseFIN, By: synth.R2I}
	}
	return c
}

// TestInteropMatrix generates one connection per row of the RNIC
// interoperability matrix (PROTOCOL.md section E, seed 000 Figures 2-4), as
// conforming RNICs would behave, plus broken variants, and checks the
// verdict. The expected rows and outcomes are the matrix's.
func TestInteropMatrix(t *testing.T) {
	rdmac := synth.MPAFrame{Rev: 0, M: true, C: true}
	on, off := synth.Bool(true), synth.Bool(false)
	tests := []struct {
		name     string
		conn     synth.Conn
		row      string
		close    bool
		v        int
		mi, mr   bool // expected markers i2r, r2i
		match    bool
		findings []string
	}{
		{name: "row 1/3: RDMAC initiator, rev 0 reply", conn: interopConn(rdmac, rdmac, true), row: "1/3", v: 0, mi: true, mr: true, match: true},
		{name: "row 2: RDMAC initiator, IETF non-permissive responder closes",
			conn: interopConn(rdmac, synth.MPAFrame{Rev: 1, M: false}, false), row: "2", close: true, match: true},
		{name: "row 4: IETF initiator closes on a rev 0 reply",
			conn: func() synth.Conn {
				c := interopConn(synth.MPAFrame{Rev: 1}, rdmac, false)
				c.Close.By = synth.I2R
				return c
			}(), row: "4", close: true, match: true},
		{name: "row 5: permissive IETF initiator accepts rev 0, markers both ways",
			conn: func() synth.Conn {
				c := interopConn(synth.MPAFrame{Rev: 1, M: false}, rdmac, true)
				c.MarkersR2I, c.MarkersI2R, c.CRC = on, on, on
				return c
			}(), row: "5", v: 0, mi: true, mr: true, match: true},
		{name: "row 6: IETF both, markers to the initiator only",
			conn: interopConn(synth.MPAFrame{Rev: 1, M: true}, synth.MPAFrame{Rev: 1, M: false}, true), row: "6", v: 1, mi: false, mr: true, match: true},
		{name: "row 6 with markers both", conn: interopConn(synth.MPAFrame{Rev: 1, M: true, C: true}, synth.MPAFrame{Rev: 2, M: true}, true),
			row: "6", v: 1, mi: true, mr: true, match: true},
		// Broken variants: each must be reported with the matrix row.
		{name: "row 2 broken: FPDUs after a rev 1 reply to an RDMAC request",
			conn: func() synth.Conn {
				c := interopConn(rdmac, synth.MPAFrame{Rev: 1, M: true, C: true}, true)
				c.MarkersR2I, c.MarkersI2R = on, on
				return c
			}(), row: "2", close: true, match: false, findings: []string{"interop.close_expected"}},
		{name: "row 5 broken: the IETF initiator keeps markers off",
			conn: func() synth.Conn {
				c := interopConn(synth.MPAFrame{Rev: 1, M: false}, rdmac, true)
				c.MarkersR2I, c.MarkersI2R, c.CRC = off, on, on
				return c
			}(), row: "5", v: 0, mi: true, mr: true, match: false, findings: []string{"mpa.markers_unexpected", "interop.markers_mismatch"}},
		{name: "row 6 broken: DV 0 on an IETF connection",
			conn: func() synth.Conn {
				c := interopConn(synth.MPAFrame{Rev: 1}, synth.MPAFrame{Rev: 1}, true)
				c.DV, c.RV = synth.U8(0), synth.U8(0)
				return c
			}(), row: "6", v: 1, match: false, findings: []string{"interop.version_mismatch"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pcap bytes.Buffer
			if _, err := synth.Generate(synth.Scenario{Conns: []synth.Conn{tc.conn}}, &pcap, nil); err != nil {
				t.Fatal(err)
			}
			recs := decodeReader(t, &pcap, flows.Options{})
			var sum *flows.ConnSummary
			codes := map[string]bool{}
			for _, r := range recs {
				switch {
				case r.Type == flows.RecConn:
					sum = r.Summary
				case r.Type == flows.RecFinding:
					codes[r.Finding.Code] = true
				case r.Type == flows.RecFPDU:
					for _, f := range r.FPDU.Findings {
						codes[f.Code] = true
					}
				}
			}
			if sum == nil || sum.Interop == nil {
				t.Fatalf("no interop verdict")
			}
			iv := sum.Interop
			if iv.Row != tc.row || iv.ExpectClose != tc.close || iv.Match != tc.match {
				t.Errorf("row %s close %v match %v, want row %s close %v match %v (findings %v)", iv.Row, iv.ExpectClose, iv.Match, tc.row, tc.close, tc.match, codes)
			}
			if !tc.close && (iv.ExpectV != tc.v || iv.ExpectMarkersI2R != tc.mi || iv.ExpectMarkersR2I != tc.mr) {
				t.Errorf("expected V=%d M=%v/%v, want V=%d M=%v/%v", iv.ExpectV, iv.ExpectMarkersI2R, iv.ExpectMarkersR2I, tc.v, tc.mi, tc.mr)
			}
			for _, f := range tc.findings {
				if !codes[f] {
					t.Errorf("finding %s not reported (got %v)", f, codes)
				}
			}
			if tc.match {
				for c := range codes {
					if len(c) > 8 && c[:8] == "interop." {
						t.Errorf("unexpected finding %s on a conforming connection", c)
					}
				}
			}
		})
	}
}
