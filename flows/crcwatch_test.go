package flows_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// crcFaultScenario is the midstream scenario (markers both ways when
// markers is set), captured from its start when whole, with fault applied
// to the CRC of every FPDU the initiator sends: "reverse" (the CRC32c with
// its octets in reverse order, synth's ReverseCRC), "corrupt" (its
// complement) or "" (none); crcOff negotiates CRC off (the field is zero).
func crcFaultScenario(markers, whole, crcOff bool, fault string) synth.Scenario {
	sc, _ := synth.Named("midstream", 1)
	c := &sc.Conns[0]
	c.MPA.Request.M, c.MPA.Reply.M = markers, markers
	c.MPA.Request.C, c.MPA.Reply.C = !crcOff, !crcOff
	if whole {
		c.Impair.StartAt = nil
	}
	for i := range 64 {
		ref := synth.FPDURef{Dir: synth.I2R, Index: i}
		switch fault {
		case "reverse":
			c.Impair.ReverseCRC = append(c.Impair.ReverseCRC, ref)
		case "corrupt":
			c.Impair.CorruptCRC = append(c.Impair.CorruptCRC, ref)
		}
	}
	return sc
}

// TestCRCFaults: a sender whose CRCs are all wrong, captured from the
// start (the MPA exchange says CRC is on) or mid-stream (the decoder
// guesses CRC use from the data), checked against the generator's truth.
// Mid-stream, no CRC32c of that direction validates, so framing locks on
// consistent headers with CRC taken as off; the CRC fields of its first
// three FPDUs then say more: the CRC32c octets reversed make CRC on and
// an error (mpa.crc_byte_order), every later FPDU's CRC checked and bad as
// in the truth; fields that are neither zero nor a CRC32c either way make
// a warning (mpa.crc_unverified), as the data cannot tell CRC off with a
// sender that fills the field from CRC on with wrong CRCs. Zero fields
// (CRC off as Linux siw sends it) and good CRCs make neither. With the
// exchange captured, each mpa.crc_bad says when the field is the CRC32c
// reversed.
func TestCRCFaults(t *testing.T) {
	cases := []struct {
		name                   string
		markers, whole, crcOff bool
		fault                  string
		byteOrder, unverified  int // findings expected
		reversedMsgs           bool
	}{
		{"midstream reversed", false, false, false, "reverse", 1, 0, true},
		{"midstream markers reversed", true, false, false, "reverse", 1, 0, true},
		{"midstream corrupt", false, false, false, "corrupt", 0, 1, false},
		{"midstream markers corrupt", true, false, false, "corrupt", 0, 1, false},
		{"midstream clean", false, false, false, "", 0, 0, false},
		{"midstream markers clean", true, false, false, "", 0, 0, false},
		{"midstream CRC off", false, false, true, "", 0, 0, false},
		{"midstream CRC off, fields filled", false, false, true, "corrupt", 0, 1, false},
		{"whole reversed", false, true, false, "reverse", 0, 0, true},
		{"whole markers reversed", true, true, false, "reverse", 0, 0, true},
		{"whole corrupt", false, true, false, "corrupt", 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var pcap bytes.Buffer
			res, err := synth.Generate(crcFaultScenario(tc.markers, tc.whole, tc.crcOff, tc.fault), &pcap, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs := decodeReader(t, &pcap, flows.Options{})
			truth := map[uint32]*synth.TruthFPDU{}
			var src string
			for _, r := range res.Records {
				if f, ok := r.(*synth.TruthFPDU); ok && f.Dir == "i2r" {
					truth[f.Seq], src = f, f.Src
				}
			}
			var byteOrder, unverified []dissect.Finding
			var fpdus []*flows.Record
			for _, r := range recs {
				var fs []dissect.Finding
				switch {
				case r.Finding != nil:
					fs = []dissect.Finding{*r.Finding}
				case r.FPDU != nil:
					fs = r.FPDU.Findings
					if r.Src.String() == src {
						fpdus = append(fpdus, r)
					}
				}
				for _, f := range fs {
					switch f.Code {
					case "mpa.crc_byte_order":
						byteOrder = append(byteOrder, f)
					case "mpa.crc_unverified":
						unverified = append(unverified, f)
					case "mpa.crc_bad":
						if got := strings.Contains(f.Msg, "octets reversed"); got != tc.reversedMsgs {
							t.Errorf("mpa.crc_bad %q: says the octets are reversed %v, want %v", f.Msg, got, tc.reversedMsgs)
						}
					}
				}
			}
			if len(byteOrder) != tc.byteOrder || len(unverified) != tc.unverified {
				t.Fatalf("mpa.crc_byte_order %d, mpa.crc_unverified %d; want %d, %d", len(byteOrder), len(unverified), tc.byteOrder, tc.unverified)
			}
			if len(fpdus) < 6 {
				t.Fatalf("%d FPDUs of the initiator decoded", len(fpdus))
			}
			decided := byteOrder
			if len(decided) == 0 {
				decided = unverified
			}
			for i, r := range fpdus {
				tr := truth[r.FPDU.Seq]
				if tr == nil || tr.Len != r.FPDU.Len {
					t.Fatalf("FPDU at seq %d (frame %d) is not one the initiator sent", r.FPDU.Seq, r.Frame)
				}
				want := tr.MPA.CRCStatus
				if r.FPDU.CRC != tr.MPA.CRC {
					t.Errorf("frame %d: CRC field %#x, truth %#x", r.Frame, r.FPDU.CRC, tr.MPA.CRC)
				}
				switch {
				case len(decided) > 0 && i < 3:
					// The FPDUs the decision rests on, framed before it.
					want = "unchecked"
					if r.Frame != decided[0].Frames[i] {
						t.Errorf("finding's frame %d is %d, the FPDU's %d", i, decided[0].Frames[i], r.Frame)
					}
				case !tc.whole && tc.fault == "corrupt":
					want = "unchecked" // guessed off, and left so
				}
				if got := r.FPDU.CRCStatus.String(); got != want {
					t.Errorf("frame %d (FPDU %d of the initiator's): CRC %s, want %s", r.Frame, i, got, want)
				}
			}
			if len(decided) > 0 {
				f := decided[0]
				if len(f.Frames) != 3 {
					t.Errorf("finding frames %v", f.Frames)
				}
				if want := map[string]dissect.Severity{"mpa.crc_byte_order": dissect.SeverityError, "mpa.crc_unverified": dissect.SeverityWarning}[f.Code]; f.Severity != want {
					t.Errorf("%s severity %v", f.Code, f.Severity)
				}
				t.Log(f.Msg)
			}
		})
	}
}
