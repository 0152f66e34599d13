package flows_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// TestTerminateLinkedToSegment: each real siw Terminate is explained and
// linked to the segment it terminates. The oracle is tshark: the frame of
// the last segment, before the Terminate, whose DDP fields (as tshark
// decodes them) equal those in the Terminate's terminated DDP header. tshark
// does not decode that header (siw's bitfield layout hides the D bit from
// it), so the test takes its octets from the Terminate's TCP payload at the
// fixed offset of RFC 5040 §4.8: after the 2-octet ULPDU_Length, the 18-octet
// untagged DDP header, the 4-octet Terminate control and the 2-octet DDP
// segment length.
func TestTerminateLinkedToSegment(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	for _, tc := range []struct {
		file string
		text string
	}{
		{"term_badwrite.pcap", "Invalid STag"},
		{"term_sendinv.pcap", "STag cannot be invalidated"},
		{"term_toolong.pcap", "Invalid MSN - no buffer available"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := "../testdata/siw/" + tc.file
			out, err := exec.Command(tshark, "-r", path, "-Y", "iwarp_ddp", "-T", "fields", "-E", "occurrence=f",
				"-e", "frame.number", "-e", "iwarp_rdma.opcode", "-e", "iwarp_ddp.stag", "-e", "iwarp_ddp.tagged_offset",
				"-e", "iwarp_ddp.qn", "-e", "iwarp_ddp.msn", "-e", "iwarp_ddp.mo", "-e", "tcp.payload").Output()
			if err != nil {
				t.Fatal(err)
			}
			type row struct{ frame, op, stag, to, qn, msn, mo, termHdr string }
			var rows []row
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				c := strings.Split(l, "\t")
				for len(c) < 8 {
					c = append(c, "")
				}
				rows = append(rows, row{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]})
			}
			// The Terminate and the header it carries, as tshark sees them.
			var term row
			for _, r := range rows {
				if r.op == "0x07" {
					term = r
				}
			}
			if term.frame == "" || len(term.termHdr) < 2*(2+18+4+2+14) {
				t.Fatalf("tshark found no Terminate carrying a DDP header")
			}
			h := strings.ReplaceAll(term.termHdr, ":", "")[2*(2+18+4+2):]
			want := ""
			for _, r := range rows {
				if f, _ := strconv.Atoi(r.frame); strconv.Itoa(f) == term.frame || f >= atoi(term.frame) {
					break
				}
				// Tagged header: octets 2-5 STag, 6-13 TO; untagged: 6-9 QN, 10-13 MSN, 14-17 MO.
				if h[0] >= '8' && len(h) >= 28 {
					if r.stag == "0x"+h[4:12] && r.to == "0x"+h[12:28] {
						want = r.frame
					}
				} else if len(h) >= 36 {
					qn, _ := strconv.ParseUint(h[12:20], 16, 32)
					msn, _ := strconv.ParseUint(h[20:28], 16, 32)
					mo, _ := strconv.ParseUint(h[28:36], 16, 32)
					if r.qn == strconv.FormatUint(qn, 10) && r.msn == strconv.FormatUint(msn, 10) && r.mo == strconv.FormatUint(mo, 10) {
						want = r.frame
					}
				}
			}
			if want == "" {
				t.Fatalf("tshark shows no segment matching the terminated header %s", h)
			}
			var got *flows.FPDURecord
			for _, r := range testutil.OfType(testutil.Decode(t, path, flows.Options{}), flows.RecFPDU) {
				if r.FPDU.SegOK && r.FPDU.Seg.Opcode == 7 {
					got = r.FPDU
				}
			}
			if got == nil {
				t.Fatal("no Terminate decoded")
			}
			if strconv.FormatUint(got.TermFrame, 10) != want {
				t.Errorf("Terminate linked to frame %d, tshark's matching segment is frame %s", got.TermFrame, want)
			}
			if !strings.Contains(got.Seg.Term.Explain(), tc.text) {
				t.Errorf("explanation %q lacks %q", got.Seg.Term.Explain(), tc.text)
			}
		})
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
