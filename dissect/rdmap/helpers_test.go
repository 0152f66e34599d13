package rdmap

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ddp"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ulpduOf returns the ULPDU of the FPDU at the start of an MPA stream
// payload (as tshark's tcp.payload prints it): the 2-octet ULPDU_Length,
// then that many octets.
func ulpduOf(t testing.TB, tcpPayload string) []byte {
	t.Helper()
	b := unhex(t, tcpPayload)
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n {
		t.Fatalf("payload holds %d octets, ULPDU_Length says %d", len(b)-2, n)
	}
	return b[2 : 2+n]
}

// sameSegment compares two Segments field by field, Payload by content.
func sameSegment(a, b Segment) bool {
	return segKey(a) == segKey(b) && bytes.Equal(a.Payload, b.Payload)
}

// segFields is Segment without Payload, so that it can be compared.
type segFields struct {
	DDP        ddp.Header
	RV, Rsvd   uint8
	Opcode     Opcode
	InvalSTag  uint32
	Read       ReadRequest
	Term       Terminate
	Immediate  uint64
	AtomicReq  AtomicRequest
	AtomicResp AtomicResponse
	HdrLen     int
}

func segKey(s Segment) segFields {
	return segFields{s.DDP, s.RV, s.Rsvd, s.Opcode, s.InvalSTag, s.Read, s.Term, s.Immediate, s.AtomicReq, s.AtomicResp, s.HdrLen}
}
