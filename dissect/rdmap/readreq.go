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

// AppendReadRequest appends the 28-octet wire form of r (RFC 5040 §4.4)
// to dst.
func AppendReadRequest(dst []byte, r ReadRequest) []byte {
	dst = binary.BigEndian.AppendUint32(dst, r.SinkSTag)
	dst = binary.BigEndian.AppendUint64(dst, r.SinkTO)
	dst = binary.BigEndian.AppendUint32(dst, r.Size)
	dst = binary.BigEndian.AppendUint32(dst, r.SrcSTag)
	return binary.BigEndian.AppendUint64(dst, r.SrcTO)
}
