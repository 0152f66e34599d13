package sctp_test

import (
	"fmt"

	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/sctp"
)

// Walk the chunks of an SCTP packet and read the DDP Stream Session
// Control message it carries.
func ExampleNextChunk() {
	pkt := sctp.AppendHeader(nil, sctp.Header{SrcPort: 5000, DstPort: 5001, VerificationTag: 1})
	msg := sctp.AppendSessionControl(nil, sctp.SessionControl{Func: sctp.FuncEnhancedAccept,
		PD: mpa.AppendEnhanced(nil, mpa.Enhanced{IRD: 4, ORD: 2, B: true})})
	pkt = sctp.AppendData(pkt, sctp.Data{Flags: sctp.FlagsUnfragment, TSN: 7, PPID: sctp.PPIDDDPSessionControl, UserData: msg})
	sctp.SetChecksum(pkt)

	h, _ := sctp.DecodeHeader(pkt)
	fmt.Println("checksum ok:", sctp.Checksum(pkt) == h.Checksum)
	for off := sctp.HeaderLen; off < len(pkt); {
		c, next, err := sctp.NextChunk(pkt, off)
		if err != nil {
			break
		}
		off = next
		d, err := sctp.DecodeData(c)
		if err != nil || d.PPID != sctp.PPIDDDPSessionControl {
			continue
		}
		s, _ := sctp.DecodeSessionControl(d.UserData)
		e, _, _ := s.Enhanced()
		fmt.Println(c.Type, "TSN", d.TSN, s.Func, "IRD", e.IRD, "ORD", e.ORD, "RTR", e.RTR(mpa.FlagsDraft01))
	}
	// Output:
	// checksum ok: true
	// DATA TSN 7 enhanced_accept IRD 4 ORD 2 RTR write
}
