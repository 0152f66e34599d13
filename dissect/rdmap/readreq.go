package rdmap

import (
	"encoding/binary"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// ReadRequestLen is the length of the RDMA Read Request header (RFC 5040
// §4.4 Figure 6), which follows the 18-octet untagged DDP header.
const ReadRequestLen = 28

// ReadRequest is the RDMA Read Request header (RFC 5040 §4.4): where the
// data goes (Data Sink STag and TO, at the requester), how much (RDMA Read
// Message Size) and where it comes from (Data Source STag and TO, at the
// responder). A Terminate carries one back as its Terminated RDMA Header
// (RFC 5040 §4.8), with the offsets advanced and Size reduced when the
// Read had partly progressed.
type ReadRequest struct {
	SinkSTag uint32
	SinkTO   uint64
	Size     uint32
	SrcSTag  uint32
	SrcTO    uint64
}

// DecodeReadRequest reads an RDMA Read Request header from the start of b
// (RFC 5040 §4.4). It returns dissect.ErrTruncated when b is shorter than
// ReadRequestLen. It does not allocate.
func DecodeReadRequest(b []byte) (ReadRequest, error) {
	if len(b) < ReadRequestLen {
		return ReadRequest{}, dissect.ErrTruncated
	}
	b = b[:ReadRequestLen]
	return ReadRequest{
		SinkSTag: binary.BigEndian.Uint32(b[0:4]),
		SinkTO:   binary.BigEndian.Uint64(b[4:12]),
		Size:     binary.BigEndian.Uint32(b[12:16]),
		SrcSTag:  binary.BigEndian.Uint32(b[16:20]),
		SrcTO:    binary.BigEndian.Uint64(b[20:28]),
	}, nil
}

// decodeReadRequestCut reads the fields of an RDMA Read Request header
// that lie wholly within b, shorter than ReadRequestLen (DecodeCutInto).
func decodeReadRequestCut(b []byte) ReadRequest {
	var r ReadRequest
	if len(b) >= 4 {
		r.SinkSTag = binary.BigEndian.Uint32(b[0:4])
	}
	if len(b) >= 12 {
		r.SinkTO = binary.BigEndian.Uint64(b[4:12])
	}
	if len(b) >= 16 {
		r.Size = binary.BigEndian.Uint32(b[12:16])
	}
	if len(b) >= 20 {
		r.SrcSTag = binary.BigEndian.Uint32(b[16:20])
	}
	return r
}

// ReadRequestKnown reports which fields of a Read Request header the
// first have octets held (Segment.HdrCut; 0 or ReadRequestLen and more:
// all of them), in the order of the header: Data Sink STag, Data Sink
// TO, RDMA Read Message Size, Data Source STag, Data Source TO.
func ReadRequestKnown(have int) (sinkSTag, sinkTO, size, srcSTag, srcTO bool) {
	if have <= 0 || have >= ReadRequestLen {
		return true, true, true, true, true
	}
	return have >= 4, have >= 12, have >= 16, have >= 20, false
}

// AppendReadRequest appends the 28-octet wire form of r (RFC 5040 §4.4)
// to dst.
func AppendReadRequest(dst []byte, r ReadRequest) []byte {
	dst = binary.BigEndian.AppendUint32(dst, r.SinkSTag)
	dst = binary.BigEndian.AppendUint64(dst, r.SinkTO)
	dst = binary.BigEndian.AppendUint32(dst, r.Size)
	dst = binary.BigEndian.AppendUint32(dst, r.SrcSTag)
	return binary.BigEndian.AppendUint64(dst, r.SrcTO)
}
